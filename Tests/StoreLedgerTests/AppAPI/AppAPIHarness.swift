import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JWTKit
import Logging
import NIOCore
import PostgresNIO
import StoreLedgerAppStoreAPI
import StoreLedgerCore
import StoreLedgerHTTP
import StoreLedgerProcessing
import StoreLedgerStore
import StoreLedgerTestSupport
import StoreLedgerVerification

/// The app-facing API wired as in production (real router, real Postgres, the one handler, jwt-kit), trusting the
/// test PKI for `TestSigner`'s app in Sandbox and Production, with helpers to mint user tokens and call routes.
struct AppAPIHarness {
    /// The time a test's request may spend asking the fake App Store Server API: the service's 20 s
    /// (``AppAPIDependencies/defaultAppStoreBudget``) ran out on a loaded 2-core machine during the full test run,
    /// where a test's tasks can wait seconds for a thread; tests of the budget itself give their own.
    static let testAppStoreBudget: Duration = .seconds(60)

    static let secret = "test-secret-for-hs256-user-tokens"
    static let adminKey = "test-admin-key"

    let db: TestDatabase
    let signer: TestSigner
    let dependencies: AppAPIDependencies
    let migrator = Migrator(migrations: try! Migration.bundled())

    /// Builds the API over `db`; `now` pins the time of asking. The deployment accepts `apps` (default: `TestSigner`'s
    /// app only) and the API answers for `app` (default: every app, as with one), as `buildAppAPI` wires them.
    init(
        _ db: TestDatabase, pki: TestPKI, catalog: ProductCatalog = .empty, auth: AuthenticationConfiguration? = nil,
        appStore: AppStoreAPIClient? = nil, intentLifetime: Duration = .seconds(86_400), now: @escaping @Sendable () -> Date = { Date() },
        anonymousValidation: AnonymousValidation? = nil, appStoreBudget: Duration = AppAPIHarness.testAppStoreBudget,
        apps: [AppIdentity] = [AppIdentity(bundleID: TestSigner.defaultBundleID, appAppleID: TestSigner.defaultAppAppleID)],
        app: String? = nil
    ) async throws {
        self.db = db
        self.signer = TestSigner(pki: pki, bundleID: app ?? TestSigner.defaultBundleID)
        let trust = try TrustConfiguration(rootCertificatesDER: [Data(pki.rootDER)])
        let accepted = try LedgerVerifiers(apps: apps, environments: [.sandbox, .production], trust: trust)
        let verifiers = try app.map { try accepted.only(app: $0) } ?? accepted
        let processor = InlineProcessor(client: db.client, handler: LedgerHandler(verifiers: verifiers), owner: "inline:test")
        let authenticator = try await Authenticator(
            configuration: auth ?? AuthenticationConfiguration(jwtSecret: Self.secret, adminAPIKey: Self.adminKey),
            apiKeys: APIKeyStore(client: db.client)
        )
        self.dependencies = AppAPIDependencies(
            intake: PurchaseIntake(processor: processor, catalog: catalog, app: app), authenticator: authenticator,
            intents: PurchaseIntentStore(client: db.client), appStore: appStore, intentLifetime: intentLifetime, now: now,
            anonymousValidation: anonymousValidation, appStoreBudget: appStoreBudget
        )
        // As the application does before it serves: the catalog goes where entitlements_at reads it.
        try await dependencies.intake.publishCatalog(logger: Logger(label: "test"))
    }

    /// The application under test.
    var app: some ApplicationProtocol {
        Application(
            router: buildReceiverRouter(
                client: db.client, migrator: migrator, configuration: .underTest, appAPI: AppAPI(dependencies: dependencies)
            ))
    }

    /// Claims of a user token as the tests mint them.
    struct Claims: JWTPayload {
        var sub: SubjectClaim
        var exp: ExpirationClaim
        var nbf: NotBeforeClaim?
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// An HS256 token for `user`, valid for `lifetime` seconds (negative: already expired), and from `notBefore`
    /// seconds from now when given (an `nbf` claim).
    static func token(
        _ user: String, lifetime: TimeInterval = 3600, notBefore: TimeInterval? = nil, secret: String = AppAPIHarness.secret
    ) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        let claims = Claims(
            sub: .init(value: user), exp: .init(value: Date().addingTimeInterval(lifetime)),
            nbf: notBefore.map { .init(value: Date().addingTimeInterval($0)) }
        )
        return try await keys.sign(claims)
    }

    /// `Authorization: Bearer <token of user>` (plus JSON content type).
    static func headers(user: String) async throws -> HTTPFields {
        [.authorization: "Bearer \(try await token(user))", .contentType: "application/json"]
    }

    /// `X-API-Key: <admin key>` (plus JSON content type).
    static var serviceHeaders: HTTPFields {
        [HTTPField.Name("X-API-Key")!: adminKey, .contentType: "application/json"]
    }

    /// A JSON body.
    static func body(_ object: [String: Any]) throws -> ByteBuffer {
        ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: object))
    }

    /// A signed subscription transaction expiring `expiresIn` seconds from now.
    func subscription(
        _ transactionID: String, original: String? = nil, product: String = "com.example.storeledger.monthly",
        expiresIn: TimeInterval = 30 * 86_400, token: String? = nil, signer: TestSigner? = nil
    ) throws -> String {
        let signer = signer ?? self.signer
        let purchased = Date().addingTimeInterval(expiresIn - 30 * 86_400)
        var overrides: [String: Any] = [:]
        if let token { overrides["appAccountToken"] = token }
        return try signer.signedTransaction(
            signer.transactionPayload(
                transactionID: transactionID, originalTransactionID: original, productID: product, purchaseDate: purchased,
                expiresDate: Date().addingTimeInterval(expiresIn), signedDate: Date(), overrides: overrides
            ))
    }

    /// A signed non-consumable purchase; with `original`, a restored copy of that purchase (a transaction of its own).
    func nonConsumable(
        _ transactionID: String, original: String? = nil, product: String = "com.example.storeledger.unlock", token: String? = nil
    ) throws -> String {
        var overrides: [String: Any] = [:]
        if let token { overrides["appAccountToken"] = token }
        return try signer.signedTransaction(
            signer.transactionPayload(
                transactionID: transactionID, originalTransactionID: original, productID: product, purchaseDate: Date().addingTimeInterval(-60),
                signedDate: Date(), type: "Non-Consumable", overrides: overrides
            ))
    }

    /// Decodes a response body as a JSON object.
    static func json(_ response: TestResponse) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any] ?? [:]
    }

    /// The RFC 3339 date (no fractional seconds, as the answers write them) under `key` of an answer; nil when absent
    /// or not such a date.
    static func date(_ json: [String: Any], _ key: String) -> Date? {
        (json[key] as? String).flatMap { ISO8601DateFormatter().date(from: $0) }
    }

    /// The date under `key` of a seed 001 answer, written as JavaScript's `toISOString()` writes one
    /// (`2026-02-21T00:00:00.000Z`: exactly three fraction digits, UTC); nil when absent or in any other shape.
    static func javaScriptDate(_ json: [String: Any], _ key: String) -> Date? {
        guard let text = json[key] as? String, text.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    /// An integer query result.
    func count(_ query: PostgresQuery) async throws -> Int {
        try await db.scalar(query)
    }
}
