import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import StoreLedgerAppStoreAPI
import StoreLedgerCore
import StoreLedgerHTTP
import StoreLedgerProcessing
import StoreLedgerStore
import StoreLedgerTestSupport
import StoreLedgerVerification
import StoreLedgerWorker
import Testing

/// Issue 12, item 1: signed data is judged by the environment it is signed for, whatever way it came in.
///
/// Every way signed data enters (each receiver route, reconciliation, the app routes that take or fetch signed
/// transactions, a standalone renewal info) × every environment that way can carry (Production, Sandbox, Xcode,
/// LocalTesting) × every deployment (`APP_APPLE_ID` set or unset × `APPLE_ENVIRONMENTS` unset, Production, Sandbox or
/// both × `ALLOW_XCODE_DATA` off or on): payloads shaped like Apple's (Sandbox without `appAppleId`, Production with
/// it) signed by the test PKI, posted over the real router, processed by the real handler against real Postgres; the
/// final queue state, the exact reason and the projection are asserted.
@Suite("Environments: every way in × every environment × every deployment")
struct EnvironmentMatrixTests {
    static let pki = try! TestPKI()
    static let bundleID = TestSigner.defaultBundleID

    /// One deployment's verification settings, and the reason text its accepted environments are quoted with.
    struct Deployment: Sendable, CustomTestStringConvertible {
        /// `APP_APPLE_ID` is set (to the signer's app Apple id).
        var appAppleIDSet: Bool
        /// `APPLE_ENVIRONMENTS`, nil when unset.
        var environmentsSetting: String?
        /// `ALLOW_XCODE_DATA`.
        var allowXcode: Bool
        /// The environments it must accept.
        var accepts: Set<String>
        /// How its reasons quote the setting.
        var source: String

        var testDescription: String {
            "APP_APPLE_ID \(appAppleIDSet ? "set" : "unset"), APPLE_ENVIRONMENTS=\(environmentsSetting ?? "(unset)"), ALLOW_XCODE_DATA=\(allowXcode)"
        }

        var apps: [AppIdentity] {
            [AppIdentity(bundleID: EnvironmentMatrixTests.bundleID, appAppleID: appAppleIDSet ? TestSigner.defaultAppAppleID : nil)]
        }

        func verifiers() throws -> LedgerVerifiers {
            try LedgerVerifiers(
                apps: apps, environmentsSetting: environmentsSetting,
                trust: try TrustConfiguration(rootCertificatesDER: [EnvironmentMatrixTests.pki.rootDER]), allowXcodeEnvironment: allowXcode
            )
        }

        /// The final state and reason the data of `environment` must end in.
        func expected(_ environment: String) -> (state: String, reason: String?) {
            if environment == "Xcode" || environment == "LocalTesting" {
                return allowXcode
                    ? ("done", nil)
                    : (
                        "rejected",
                        "untrustedChain: signed for \(environment), whose data is signed locally by Xcode, not by the App Store; "
                            + "it is accepted only when Xcode data is explicitly allowed "
                            + "(ALLOW_XCODE_DATA=true, allowXcodeEnvironment, storeledger verify --allow-xcode)"
                    )
            }
            return accepts.contains(environment)
                ? ("done", nil)
                : ("rejected", "wrongEnvironment: signed for \(environment), which this deployment does not accept (\(source))")
        }
    }

    /// Every deployment that starts (without `APP_APPLE_ID`, or with `ALLOW_XCODE_DATA`, accepting Production is
    /// refused: see below).
    static let deployments: [Deployment] = [false, true].flatMap { xcode in
        [
            Deployment(
                appAppleIDSet: true, environmentsSetting: nil, allowXcode: xcode, accepts: ["Production", "Sandbox"],
                source: "APPLE_ENVIRONMENTS unset: Production,Sandbox"),
            Deployment(
                appAppleIDSet: true, environmentsSetting: "Production", allowXcode: xcode, accepts: ["Production"],
                source: "APPLE_ENVIRONMENTS=Production"),
            Deployment(
                appAppleIDSet: true, environmentsSetting: "sandbox", allowXcode: xcode, accepts: ["Sandbox"],
                source: "APPLE_ENVIRONMENTS=Sandbox"),
            Deployment(
                appAppleIDSet: true, environmentsSetting: "Production, Sandbox", allowXcode: xcode, accepts: ["Production", "Sandbox"],
                source: "APPLE_ENVIRONMENTS=Production,Sandbox"),
            Deployment(
                appAppleIDSet: false, environmentsSetting: nil, allowXcode: xcode, accepts: ["Sandbox"],
                source: "APPLE_ENVIRONMENTS unset: Sandbox only, as APP_APPLE_ID is not set"),
            Deployment(
                appAppleIDSet: false, environmentsSetting: "Sandbox", allowXcode: xcode, accepts: ["Sandbox"],
                source: "APPLE_ENVIRONMENTS=Sandbox"),
        ].filter { !xcode || !$0.accepts.contains("Production") }
    }

    /// Signed data of one environment, shaped as Apple (or Xcode) sends it.
    struct Shaper {
        let environment: String

        var signer: TestSigner {
            var signer = TestSigner(pki: EnvironmentMatrixTests.pki)
            signer.environment = environment
            return signer
        }

        /// Xcode and LocalTesting data is signed locally: one self-issued certificate, not Apple's chain.
        var variant: JWSVariant {
            environment == "Xcode" || environment == "LocalTesting" ? .customX5C([EnvironmentMatrixTests.pki.x5c[0]]) : .genuine
        }

        func transactionPayload(_ id: String) -> [String: Any] {
            signer.transactionPayload(
                transactionID: id, purchaseDate: Date().addingTimeInterval(-86_400), expiresDate: Date().addingTimeInterval(29 * 86_400),
                signedDate: Date()
            )
        }

        func transaction(_ id: String) throws -> String {
            try signer.sign(json: transactionPayload(id), variant: variant)
        }

        func renewalInfo(_ id: String) throws -> String {
            try signer.sign(json: signer.renewalInfoPayload(originalTransactionID: id, signedDate: Date()), variant: variant)
        }

        /// A SUBSCRIBED notification with its transaction and renewal info; `appAppleId` in Production only.
        func notification(_ id: String, uuid: UUID) throws -> String {
            try signer.signedNotification(
                type: "SUBSCRIBED", subtype: "INITIAL_BUY", notificationUUID: uuid, signedDate: Date(),
                transaction: transactionPayload(id), renewalInfo: signer.renewalInfoPayload(originalTransactionID: id, signedDate: Date()),
                status: 1, nestedVariant: variant, variant: variant
            )
        }
    }

    /// The world one deployment runs in: its database, router, fake App Store Server API and the handler.
    struct World {
        let db: TestDatabase
        let deployment: Deployment
        let handler: LedgerHandler
        let fake: FakeAppStoreServer
        let http: any TestClientProtocol
        let reconcilerClient: AppStoreAPIClient

        /// Processes every pending event the way workers do.
        func drain() async throws {
            try await LedgerPipeline(db, handler: handler, signer: TestSigner(pki: EnvironmentMatrixTests.pki)).drain()
        }

        /// The newest event's id.
        func lastEventID() async throws -> Int {
            try await db.scalar("SELECT coalesce(max(id), 0) FROM events")
        }

        /// Final state and reason of the one event appended after `before`.
        func outcome(after before: Int) async throws -> (state: String, reason: String?, count: Int) {
            let rows = try await db.client.query(
                "SELECT q.state, q.reject_reason FROM event_queue q WHERE q.event_id > \(before) ORDER BY q.event_id", logger: db.logger
            )
            var outcomes: [(String, String?)] = []
            for try await row in rows.decode((String, String?).self) { outcomes.append(row) }
            return (outcomes.last?.0 ?? "none", outcomes.last?.1, outcomes.count)
        }

        /// Checks one case: the event appended by `submit` ends as the deployment says, and is projected iff done.
        func check(
            _ way: String, _ environment: String, id: String, notificationUUID: UUID? = nil, projects: Bool = true,
            _ submit: () async throws -> HTTPResponse.Status?
        ) async throws {
            let before = try await lastEventID()
            let status = try await submit()
            try await drain()
            let expected = deployment.expected(environment)
            let outcome = try await outcome(after: before)
            let label = "\(way) × \(environment) × \(deployment.testDescription)"
            #expect(outcome.count == 1, "\(label): one event appended")
            #expect(outcome.state == expected.state, "\(label)")
            #expect(outcome.reason == expected.reason, "\(label)")
            if let status {
                #expect(status == (expected.state == "done" ? .ok : .unprocessableContent), "\(label): HTTP status")
            }
            let done = expected.state == "done"
            if let notificationUUID {
                let notifications = try await db.scalar(
                    "SELECT count(*) FROM notifications WHERE notification_uuid = \(notificationUUID.uuidString.lowercased()) AND delivery_count = 1"
                )
                #expect(notifications == (done ? 1 : 0), "\(label): notification recorded once iff accepted")
            }
            if projects {
                let rows = try await db.scalar(
                    "SELECT count(*) FROM subscriptions WHERE environment = \(environment) AND original_transaction_id = \(id)"
                )
                #expect(rows == (done ? 1 : 0), "\(label): projected iff accepted")
            } else {
                let rows = try await db.scalar("SELECT count(*) FROM renewal_infos WHERE original_transaction_id = \(id)")
                #expect(rows == (done ? 1 : 0), "\(label): recorded iff accepted")
            }
        }
    }

    static let allEnvironments = ["Production", "Sandbox", "Xcode", "LocalTesting"]

    @Test(arguments: deployments)
    func everyWayInJudgesByTheSignedEnvironment(_ deployment: Deployment) async throws {
        try await FakeAppStoreServer.withRunning(bundleID: Self.bundleID) { fake in
            try await TestDatabase.withFresh { db in
                let verifiers = try deployment.verifiers()
                let handler = LedgerHandler(verifiers: verifiers)
                let authenticator = try await Authenticator(
                    configuration: AuthenticationConfiguration(jwtSecret: AppAPIHarness.secret, adminAPIKey: AppAPIHarness.adminKey),
                    apiKeys: APIKeyStore(client: db.client)
                )
                let appStore = try await AppStoreAPIClient(configuration: fake.configuration())
                let dependencies = AppAPIDependencies(
                    intake: PurchaseIntake(processor: InlineProcessor(client: db.client, handler: handler, owner: "inline:test"), catalog: .empty),
                    authenticator: authenticator, intents: PurchaseIntentStore(client: db.client), appStore: appStore
                )
                let app = Application(
                    router: buildReceiverRouter(
                        client: db.client, migrator: Migrator(migrations: try Migration.bundled()), configuration: .underTest,
                        appAPI: AppAPI(dependencies: dependencies)
                    ))
                try await app.test(.router) { http in
                    let world = World(db: db, deployment: deployment, handler: handler, fake: fake, http: http, reconcilerClient: appStore)
                    try await Self.run(world)
                }
                #expect(try await db.scalar("SELECT count(*) FROM events") == Self.casesPerDeployment, "every case ran")
            }
        }
    }

    /// Runs every way in for every environment it can carry.
    static func run(_ world: World) async throws {
        let http = world.http
        let user = try await AppAPIHarness.headers(user: "matrix-user")
        var next = 100
        func nextID() -> String {
            next += 1
            return "2000000000\(next)"
        }

        for environment in allEnvironments {
            let shape = Shaper(environment: environment)

            // Apple's notification URLs and the seeds' webhook aliases, whatever environment each implies.
            for route in ReceiverController.routes {
                let id = nextID()
                let uuid = UUID()
                let body = try AppAPIHarness.body(["signedPayload": try shape.notification(id, uuid: uuid)])
                try await world.check("POST \(route.path)", environment, id: id, notificationUUID: uuid) {
                    let response = try await http.execute(uri: route.path.description, method: .post, body: body)
                    #expect(response.status == .ok, "the receiver acknowledges every well-formed notification")
                    return nil
                }
            }

            // A standalone renewal info (the handler's `signedRenewalInfo` body), with a misleading hint.
            let renewalID = nextID()
            try await world.check("standalone renewal info", environment, id: renewalID, projects: false) {
                let body = try AppAPIHarness.body(["signedRenewalInfo": try shape.renewalInfo(renewalID)])
                _ = try await EventLog(client: world.db.client).append(
                    NewEvent(source: .serverAPI, environmentHint: environment == "Production" ? .sandbox : .production, body: body),
                    logger: world.db.logger
                )
                return nil
            }

            // Seed 000: a signed transaction posted by the app, and a restore of one.
            let posted = nextID()
            try await world.check("POST /api/v1/payments/appstore/transaction", environment, id: posted) {
                try await http.execute(
                    uri: "/api/v1/payments/appstore/transaction", method: .post, headers: user,
                    body: try AppAPIHarness.body(["signed_transaction": try shape.transaction(posted)])
                ).status
            }
            let restored = nextID()
            try await world.check("POST /api/v1/payments/appstore/restore", environment, id: restored) {
                let response = try await http.execute(
                    uri: "/api/v1/payments/appstore/restore", method: .post, headers: user,
                    body: try AppAPIHarness.body(["transactions": [try shape.transaction(restored)]])
                )
                #expect(response.status == .ok)
                let json = try AppAPIHarness.json(response)
                let accepted = world.deployment.expected(environment).state == "done"
                #expect(json["restored_count"] as? Int == (accepted ? 1 : 0))
                #expect(json["rejected_count"] as? Int == (accepted ? 0 : 1))
                return nil
            }

            // Apple's API and Get Notification History only ever hold Production and Sandbox data.
            guard environment == "Production" || environment == "Sandbox" else { continue }
            let apiEnvironment: AppStoreAPIHost = environment == "Production" ? .production : .sandbox

            let reconciledID = nextID()
            let reconciledUUID = UUID()
            try await world.check("reconciliation", environment, id: reconciledID, notificationUUID: reconciledUUID) {
                await world.fake.state.setNotificationHistory(
                    [NotificationHistoryItem(signedPayload: try shape.notification(reconciledID, uuid: reconciledUUID), sendAttempts: nil)],
                    environment: apiEnvironment
                )
                let reconciler = Reconciler(client: world.db.client, appStore: world.reconcilerClient, environments: [apiEnvironment])
                let result = try await reconciler.run(
                    from: Date().addingTimeInterval(-3600), to: Date(), onlyFailures: false, logger: world.db.logger
                )
                #expect(result.appended == 1)
                return nil
            }

            // Seed 002: validate (Production, then Sandbox) and validate/sand (Sandbox only).
            let validated = nextID()
            await world.fake.state.addTransaction(try shape.transaction(validated), id: validated, environment: apiEnvironment)
            try await world.check("POST /api/iap/validate", environment, id: validated) {
                try await http.execute(
                    uri: "/api/iap/validate", method: .post, headers: user,
                    body: try AppAPIHarness.body(["transactionId": validated, "productId": "com.example.storeledger.monthly", "revoked": false])
                ).status
            }
            if environment == "Sandbox" {
                let sandboxOnly = nextID()
                await world.fake.state.addTransaction(try shape.transaction(sandboxOnly), id: sandboxOnly, environment: .sandbox)
                try await world.check("POST /api/iap/validate/sand", environment, id: sandboxOnly) {
                    try await http.execute(
                        uri: "/api/iap/validate/sand", method: .post, headers: AppAPIHarness.serviceHeaders,
                        body: try AppAPIHarness.body(["transactionId": sandboxOnly, "productId": "com.example.storeledger.monthly"])
                    ).status
                }
            }

            // Seed 001: sync takes only the transaction id; the facts come from Apple.
            let synced = nextID()
            await world.fake.state.addTransaction(try shape.transaction(synced), id: synced, environment: apiEnvironment)
            try await world.check("POST /api/subscription/sync", environment, id: synced) {
                try await http.execute(
                    uri: "/api/subscription/sync", method: .post, headers: user, body: try AppAPIHarness.body(["transactionId": synced])
                ).status
            }

        }

        // The legacy receipt holds transaction id "0": Sandbox first (Production does not know it yet), then Production.
        for environment in ["Sandbox", "Production"] {
            let shape = Shaper(environment: environment)
            await world.fake.state.addTransaction(
                try shape.transaction("0"), id: "0", environment: environment == "Production" ? .production : .sandbox
            )
            try await world.check("POST /api/v1/payments/appstore/verify", environment, id: "0") {
                try await http.execute(
                    uri: "/api/v1/payments/appstore/verify", method: .post, headers: user,
                    body: try AppAPIHarness.body(["receipt_data": try AppReceiptFixtures.receipt("xcode-app-receipt-with-transaction")])
                ).status
            }
        }
    }

    /// Ways in per environment: 5 receiver routes, a standalone renewal info, /transaction and /restore (4
    /// environments); reconciliation, validate and sync (Production, Sandbox); validate/sand (Sandbox); /verify (2).
    static let casesPerDeployment = 8 * 4 + 3 * 2 + 1 + 2

    @Test("with ALLOW_XCODE_DATA, a deployment accepting Production refuses to start, naming the settings")
    func xcodeDataWithProductionIsRefused() throws {
        let app = AppIdentity(bundleID: Self.bundleID, appAppleID: 1)
        for setting in [nil, "Production", "Sandbox,Production"] {
            let error = #expect(throws: VerificationError.self) {
                try LedgerVerifiers(apps: [app], environmentsSetting: setting, allowXcodeEnvironment: true)
            }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.detail.hasPrefix("ALLOW_XCODE_DATA accepts data Xcode signs locally") == true, "\(String(describing: error))")
            #expect(error?.detail.contains("APPLE_ENVIRONMENTS") == true)
        }
        #expect(try LedgerVerifiers(apps: [app], environmentsSetting: "Sandbox", allowXcodeEnvironment: true).environments == [.sandbox])
    }

    @Test("a deployment that refuses Production data says so at start-up, naming the setting that decided it")
    func aDeploymentRefusingProductionWarns() throws {
        let warning = try #require(
            try LedgerVerifiers(apps: [AppIdentity(bundleID: Self.bundleID)], environmentsSetting: nil).productionRefusalWarning)
        #expect(warning.hasPrefix("Production data is rejected (APPLE_ENVIRONMENTS unset: Sandbox only, as APP_APPLE_ID is not set)"))
        #expect(warning.contains("set APP_APPLE_ID"))
        let sandboxChosen = try LedgerVerifiers(apps: [AppIdentity(bundleID: Self.bundleID, appAppleID: 1)], environmentsSetting: "Sandbox")
        #expect(sandboxChosen.productionRefusalWarning?.hasPrefix("Production data is rejected (APPLE_ENVIRONMENTS=Sandbox)") == true)
        for setting in [nil, "Production", "Production,Sandbox"] {
            let live = try LedgerVerifiers(apps: [AppIdentity(bundleID: Self.bundleID, appAppleID: 1)], environmentsSetting: setting)
            #expect(live.productionRefusalWarning == nil)
        }
    }

    @Test("without APP_APPLE_ID, a deployment accepting Production refuses to start, naming the settings")
    func productionWithoutAppAppleIDIsRefused() throws {
        for setting in ["Production", "Production,Sandbox", "sandbox, production"] {
            let error = #expect(throws: VerificationError.self) {
                try LedgerVerifiers(apps: [AppIdentity(bundleID: Self.bundleID)], environmentsSetting: setting)
            }
            #expect(error?.code == .invalidConfiguration)
            #expect(
                error?.detail == "APPLE_ENVIRONMENTS accepts Production, whose data must carry the app's Apple ID, "
                    + "but app '\(Self.bundleID)' has none: set APP_APPLE_ID (or APPS=bundle.id:appAppleId), or accept Sandbox only")
        }
        for setting in ["Xcode", "Staging", " , "] {
            let error = #expect(throws: VerificationError.self) {
                try LedgerVerifiers(apps: [AppIdentity(bundleID: Self.bundleID, appAppleID: 1)], environmentsSetting: setting)
            }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.detail.hasPrefix("APPLE_ENVIRONMENTS") == true)
        }
    }
}

extension LedgerPipeline {
    /// A pipeline over a given handler (a deployment's own verification).
    init(_ db: TestDatabase, handler: LedgerHandler, signer: TestSigner) {
        self.db = db
        self.handler = handler
        self.signer = signer
    }
}
