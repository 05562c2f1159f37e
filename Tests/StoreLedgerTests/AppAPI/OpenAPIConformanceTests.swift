import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import StoreLedgerAppStoreAPI
import StoreLedgerCore
import StoreLedgerHTTP
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// Checks `docs/openapi.json` against real answers: every documented operation is exercised, every status seen is
/// documented for it, and every JSON body matches the documented schema.
@Suite("App API: the OpenAPI document matches real responses")
struct OpenAPIConformanceTests {
    static let pki = try! TestPKI()

    /// Calls routes and checks each answer against the document, remembering which operations were exercised.
    final class Recorder: @unchecked Sendable {
        let document: OpenAPIDocument
        var exercised: Set<String> = []
        var succeeded: Set<String> = []
        var problems: [String] = []

        init(document: OpenAPIDocument) { self.document = document }

        @discardableResult
        func call(
            _ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, template: String? = nil,
            headers: HTTPFields = [:], body: ByteBuffer? = nil
        ) async throws -> TestResponse {
            let response = try await client.execute(uri: uri, method: method, headers: headers, body: body)
            let template = template ?? uri
            let operation = "\(method.rawValue) \(template)"
            exercised.insert(operation)
            if (200..<300).contains(response.status.code) { succeeded.insert(operation) }
            guard let schema = document.responseSchema(path: template, method: method.rawValue, status: Int(response.status.code)) else {
                problems.append("\(operation) answered \(response.status.code), which is not documented")
                return response
            }
            let json = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
            problems += document.violations(of: json, against: schema).map { "\(operation) \(response.status.code): \($0)" }
            return response
        }
    }

    @Test func everyDocumentedOperationAnswersAsDocumented() async throws {
        let recorder = Recorder(document: try OpenAPIDocument.load())
        try await FakeAppStoreServer.withRunning { fake in
            try await TestDatabase.withFresh { db in
                let appStore = try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 2))
                let harness = try await AppAPIHarness(db, pki: Self.pki, appStore: appStore)
                try await harness.app.test(.router) { client in
                    try await Self.exercise(client, harness: harness, recorder: recorder)
                    try await Self.exerciseAppleRoutes(client, fake: fake, recorder: recorder)
                }
            }
        }
        #expect(recorder.problems == [])
        #expect(recorder.document.operations.subtracting(recorder.exercised) == [], "documented but never exercised")
        #expect(recorder.exercised.subtracting(recorder.document.operations) == [], "exercised but not documented")
        #expect(recorder.document.operations.subtracting(recorder.succeeded) == [], "never answered with success")
    }

    /// A request that succeeds, to which the empty-string check makes one change at a time.
    struct Baseline {
        let method: HTTPRequest.Method
        let template: String
        let headers: HTTPFields
        let body: [String: Any]?
        /// The path parameters' values (the template's `{name}`s).
        var path: [String: String] = [:]

        /// The request's path with `overrides` replacing some parameters' values.
        func uri(_ overrides: [String: String] = [:]) -> String {
            path.merging(overrides) { $1 }.reduce(template) { $0.replacingOccurrences(of: "{\($1.key)}", with: $1.value) }
        }
    }

    /// The successful requests the empty-string check starts from: one for every documented operation with a body or a
    /// path parameter.
    static func baselines(harness: AppAPIHarness, intentID: String) async throws -> [Baseline] {
        let user = try await AppAPIHarness.headers(user: "olivia")
        let service = AppAPIHarness.serviceHeaders
        let payments = "/api/v1/payments/appstore"
        let active = try harness.subscription("7300")
        let receipt = try AppReceiptFixtures.receipt("xcode-app-receipt-with-transaction")
        let validate: [String: Any] = [
            "transactionId": "7100", "productId": "com.example.storeledger.monthly", "revoked": false, "appAccountToken": UUID().uuidString,
        ]
        let intent: [String: Any] = ["user_id": "olivia", "product_id": "com.example.storeledger.monthly"]
        return [
            Baseline(method: .post, template: "\(payments)/transaction", headers: user, body: ["signed_transaction": active]),
            Baseline(method: .post, template: "\(payments)/restore", headers: user, body: ["transactions": [active]]),
            Baseline(method: .post, template: "\(payments)/verify", headers: user, body: ["receipt_data": receipt]),
            Baseline(method: .post, template: "/api/iap/validate", headers: service, body: validate),
            Baseline(method: .post, template: "/api/iap/validate/sand", headers: service, body: validate),
            Baseline(
                method: .post, template: "/api/subscription/sync", headers: user,
                body: ["transactionId": "7100", "productId": "com.example.storeledger.monthly", "originalTransactionId": "7100"]
            ),
            Baseline(method: .post, template: "/v1/purchase-intents", headers: service, body: intent),
            Baseline(method: .get, template: "/v1/users/{id}/entitlements", headers: service, body: nil, path: ["id": "olivia"]),
            Baseline(method: .get, template: "/v1/purchase-intents/{id}", headers: service, body: nil, path: ["id": intentID]),
        ]
    }

    /// Sends every baseline with each string the document describes (a body member, a string array's element, a path
    /// parameter) set to "", and compares the server's verdict (2xx accepts, 4xx refuses) with the document's (the
    /// value validates or not). Returns the disagreements.
    static func emptyStringDisagreements(
        _ client: some TestClientProtocol, harness: AppAPIHarness, document: OpenAPIDocument
    ) async throws -> [String] {
        var problems: [String] = []
        var covered: Set<String> = []
        let created = try await client.execute(
            uri: "/v1/purchase-intents", method: .post, headers: AppAPIHarness.serviceHeaders,
            body: try AppAPIHarness.body(["user_id": "olivia", "product_id": "com.example.storeledger.monthly"])
        )
        let intentID = try AppAPIHarness.json(created)["correlation_id"] as? String ?? ""
        func send(_ baseline: Baseline, uri: String, body: [String: Any]?) async throws -> HTTPResponse.Status {
            let buffer = try body.map { ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: $0)) }
            return try await client.execute(uri: uri, method: baseline.method, headers: baseline.headers, body: buffer).status
        }
        func compare(_ what: String, documentAllows: Bool, status: HTTPResponse.Status) {
            if status.code >= 500 {
                problems.append("\(what): the server failed (\(status.code))")
            } else if documentAllows != (200..<300).contains(status.code) {
                problems.append("\(what): the document \(documentAllows ? "allows" : "forbids") it, the server answered \(status.code)")
            }
        }
        for baseline in try await baselines(harness: harness, intentID: intentID) {
            let operation = "\(baseline.method.rawValue) \(baseline.template)"
            covered.insert(operation)
            let uri = baseline.uri()
            let status = try await send(baseline, uri: uri, body: baseline.body)
            guard (200..<300).contains(status.code) else {
                problems.append("\(operation): the baseline request answered \(status.code)")
                continue
            }
            if let schema = document.requestSchema(path: baseline.template, method: baseline.method.rawValue), let body = baseline.body {
                let object = document.resolved(schema)
                for (name, member) in object["properties"] as? [String: Any] ?? [:] {
                    let member = document.resolved(member as? [String: Any] ?? [:])
                    var changed = body
                    if OpenAPIDocument.admitsStrings(member) {
                        changed[name] = ""
                    } else if member["type"] as? String == "array",
                        OpenAPIDocument.admitsStrings(document.resolved(member["items"] as? [String: Any] ?? [:]))
                    {
                        changed[name] = [""]
                    } else {
                        continue
                    }
                    compare(
                        "\(operation) with \(name) \(changed[name] is [Any] ? "[\"\"]" : "\"\"")",
                        documentAllows: document.violations(of: changed, against: schema).isEmpty,
                        status: try await send(baseline, uri: uri, body: changed)
                    )
                }
            }
            for (name, parameter) in document.pathParameters(path: baseline.template, method: baseline.method.rawValue)
            where OpenAPIDocument.admitsStrings(parameter) {
                compare(
                    "\(operation) with path parameter \(name) \"\"",
                    documentAllows: document.violations(of: "", against: parameter).isEmpty,
                    status: try await send(baseline, uri: baseline.uri([name: ""]), body: baseline.body)
                )
            }
        }
        for operation in document.operations.sorted() {
            let parts = operation.split(separator: " ", maxSplits: 1).map(String.init)
            let takesInput =
                document.requestSchema(path: parts[1], method: parts[0]) != nil || !document.pathParameters(path: parts[1], method: parts[0]).isEmpty
            if takesInput, !covered.contains(operation) { problems.append("\(operation) takes input but has no baseline for the empty-string check") }
        }
        return problems
    }

    @Test func emptyStringsAreRefusedExactlyWhereTheDocumentSaysSo() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            try await TestDatabase.withFresh { db in
                let appStore = try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 2))
                let harness = try await AppAPIHarness(db, pki: Self.pki, appStore: appStore)
                await fake.state.addTransaction(
                    try AppStoreRoutesTests.appleTransaction("7100", signer: TestSigner(pki: Self.pki)), id: "7100", environment: .sandbox)
                await fake.state.addTransaction(
                    try AppStoreRoutesTests.appleTransaction("0", signer: TestSigner(pki: Self.pki)), id: "0", environment: .sandbox)
                try await harness.app.test(.router) { client in
                    let problems = try await Self.emptyStringDisagreements(client, harness: harness, document: try OpenAPIDocument.load())
                    #expect(problems == [])
                }
            }
        }
    }

    @Test func theEmptyStringCheckNoticesADocumentThatAllowsWhatTheServerRefuses() throws {
        // The check compares against the document's verdict; without minLength the document would allow "".
        let document = try OpenAPIDocument.load()
        let schema = try #require(document.requestSchema(path: "/v1/purchase-intents", method: "POST"))
        #expect(document.violations(of: ["user_id": "olivia", "product_id": ""], against: schema).count == 1)
        #expect(document.violations(of: ["user_id": "olivia", "product_id": "p"], against: schema) == [])
        let loose: [String: Any] = ["type": "object", "properties": ["product_id": ["type": "string"]]]
        #expect(document.violations(of: ["product_id": ""], against: loose) == [])
    }

    @Test func theValidatorCatchesWhatTheDocumentForbids() throws {
        let document = try OpenAPIDocument.load()
        let schema: [String: Any] = ["$ref": "#/components/schemas/TransactionResponse"]
        #expect(document.violations(of: ["success": true, "is_premium": false], against: schema) == [])
        #expect(document.violations(of: ["success": true], against: schema).count == 1)
        #expect(document.violations(of: ["success": 1, "is_premium": false], against: schema).count == 1)
        #expect(document.violations(of: ["success": true, "is_premium": false, "extra": 1], against: schema).count == 1)
        let subscription: [String: Any] = ["is_active": true, "environment": "Sandbox", "expires_date": "yesterday"]
        #expect(document.violations(of: ["success": true, "is_premium": true, "subscription": subscription], against: schema).count == 1)
        let error: [String: Any] = ["$ref": "#/components/schemas/Error"]
        #expect(document.violations(of: ["error": "x", "code": "Not-Stable"], against: error).count == 1)
        #expect(document.responseSchema(path: "/api/v1/payments/appstore/status", method: "GET", status: 418) == nil)
    }

    static func exercise(_ client: some TestClientProtocol, harness: AppAPIHarness, recorder: Recorder) async throws {
        let user = try await AppAPIHarness.headers(user: "olivia")
        let service = AppAPIHarness.serviceHeaders
        let payments = "/api/v1/payments/appstore"
        let active = try harness.subscription("7000")
        let expired = try harness.subscription("7001", expiresIn: -3600)
        let forged = try harness.subscription("7002", signer: TestSigner(pki: try TestPKI()))

        try await recorder.call(client, .post, "\(payments)/transaction", headers: user, body: try AppAPIHarness.body(["signed_transaction": active]))
        try await recorder.call(client, .post, "\(payments)/transaction", headers: user, body: try AppAPIHarness.body(["signed_transaction": forged]))
        try await recorder.call(client, .post, "\(payments)/transaction", headers: user, body: ByteBuffer(string: "{}"))
        try await recorder.call(client, .post, "\(payments)/transaction", body: try AppAPIHarness.body(["signed_transaction": active]))
        try await recorder.call(
            client, .post, "\(payments)/transaction", headers: service, body: try AppAPIHarness.body(["signed_transaction": active]))
        try await recorder.call(
            client, .post, "\(payments)/restore", headers: user, body: try AppAPIHarness.body(["transactions": [active, expired, forged]]))
        try await recorder.call(
            client, .post, "\(payments)/restore", headers: user, body: try AppAPIHarness.body(["transactions": Array(repeating: "x", count: 201)]))
        try await recorder.call(
            client, .post, "\(payments)/transaction", headers: user,
            body: try AppAPIHarness.body(["signed_transaction": String(repeating: "x", count: JSONBody.maximumSize)]))
        try await recorder.call(
            client, .post, "\(payments)/restore", headers: user,
            body: try AppAPIHarness.body(["transactions": [String(repeating: "x", count: AppStorePaymentsController.maximumRestoreBytes)]]))
        try await recorder.call(client, .get, "\(payments)/status", headers: user)
        try await recorder.call(client, .get, "\(payments)/status", headers: try await AppAPIHarness.headers(user: "nobody"))
        try await recorder.call(client, .get, "/api/subscription/status", headers: user)
        try await recorder.call(
            client, .get, "/api/subscription/status", headers: [.authorization: "Bearer \(try await AppAPIHarness.token("olivia", lifetime: -600))"])
        try await recorder.call(client, .get, "/v1/users/olivia/entitlements", template: "/v1/users/{id}/entitlements", headers: service)
        try await recorder.call(client, .get, "/v1/users/olivia/entitlements", template: "/v1/users/{id}/entitlements", headers: user)
        let created = try await recorder.call(
            client, .post, "/v1/purchase-intents", headers: service,
            body: try AppAPIHarness.body(["user_id": "olivia", "product_id": "com.example.storeledger.monthly"])
        )
        try await recorder.call(client, .post, "/v1/purchase-intents", headers: service, body: try AppAPIHarness.body(["product_id": "p"]))
        let id = try AppAPIHarness.json(created)["correlation_id"] as? String ?? ""
        try await recorder.call(client, .get, "/v1/purchase-intents/\(id)", template: "/v1/purchase-intents/{id}", headers: service)
        try await recorder.call(client, .get, "/v1/purchase-intents/\(UUID())", template: "/v1/purchase-intents/{id}", headers: service)
        try await recorder.call(client, .get, "/v1/purchase-intents/not-a-uuid", template: "/v1/purchase-intents/{id}", headers: service)
    }

    static func exerciseAppleRoutes(_ client: some TestClientProtocol, fake: FakeAppStoreServer, recorder: Recorder) async throws {
        let user = try await AppAPIHarness.headers(user: "olivia")
        let service = AppAPIHarness.serviceHeaders
        await fake.state.addTransaction(
            try AppStoreRoutesTests.appleTransaction("7100", signer: TestSigner(pki: Self.pki)), id: "7100", environment: .sandbox)
        await fake.state.addTransaction(
            try AppStoreRoutesTests.appleTransaction("0", signer: TestSigner(pki: Self.pki)), id: "0", environment: .sandbox)
        let forged = try AppStoreRoutesTests.appleTransaction("7101", signer: TestSigner(pki: try TestPKI()))
        await fake.state.addTransaction(forged, id: "7101", environment: .sandbox)
        for path in ["/api/iap/validate", "/api/iap/validate/sand"] {
            try await recorder.call(client, .post, path, headers: user, body: try AppStoreRoutesTests.validateBody("7100"))
            try await recorder.call(client, .post, path, headers: service, body: try AppStoreRoutesTests.validateBody("404"))
            try await recorder.call(client, .post, path, headers: service, body: try AppStoreRoutesTests.validateBody("7101"))
            try await recorder.call(client, .post, path, headers: service, body: ByteBuffer(string: "{}"))
            try await recorder.call(client, .post, path, body: try AppStoreRoutesTests.validateBody("7100"))
            await fake.state.inject([.rateLimited(), .rateLimited()])
            try await recorder.call(client, .post, path, headers: service, body: try AppStoreRoutesTests.validateBody("7100"))
        }
        try await recorder.call(client, .post, "/api/subscription/sync", headers: user, body: try AppAPIHarness.body(["transactionId": 7100]))
        try await recorder.call(client, .post, "/api/subscription/sync", headers: user, body: try AppAPIHarness.body(["transactionId": "404"]))
        try await recorder.call(client, .post, "/api/subscription/sync", headers: user, body: try AppAPIHarness.body(["transactionId": "7101"]))
        try await recorder.call(client, .post, "/api/subscription/sync", headers: user, body: ByteBuffer(string: "[]"))
        try await recorder.call(client, .post, "/api/subscription/sync", headers: service, body: try AppAPIHarness.body(["transactionId": "7100"]))
        let verify = "/api/v1/payments/appstore/verify"
        try await recorder.call(
            client, .post, verify, headers: user,
            body: try AppAPIHarness.body(["receipt_data": try AppReceiptFixtures.receipt("xcode-app-receipt-with-transaction")]))
        try await recorder.call(
            client, .post, verify, headers: user,
            body: try AppAPIHarness.body(["receipt_data": try AppReceiptFixtures.receipt("xcode-app-receipt-empty")]))
        try await recorder.call(client, .post, verify, headers: user, body: try AppAPIHarness.body(["receipt_data": "aGVsbG8="]))
        try await recorder.call(client, .post, verify, headers: user, body: ByteBuffer(string: "{}"))
        try await recorder.call(client, .post, verify, body: ByteBuffer(string: "{}"))
    }
}
