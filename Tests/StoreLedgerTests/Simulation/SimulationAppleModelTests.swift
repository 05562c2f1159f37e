import Foundation
import StoreLedgerCore
import StoreLedgerCoreTestSupport
import StoreLedgerSimulation
import Testing

/// The simulator's output, field by field, against the types of Apple's published models (``AppleModelSchema``):
/// every field it signs is one Apple's model defines, with Apple's JSON type — integer epoch milliseconds, numeric
/// string ids, `Int64` milliunit prices, Apple's enum raw values, UUID tokens — and no `appAppleId` in Sandbox data.
@Suite("Simulation: output shaped like Apple's models")
struct SimulationAppleModelTests {
    /// Signs with a throwaway chain: the shapes, not the trust, are under test here.
    static let signer = try! SigningChain()
    /// A fractional "now", as `Timestamp(Date())` gives: the simulator must still sign whole milliseconds.
    static let fractionalNow = Timestamp(millisecondsSince1970: 1_764_000_000_123.456)

    /// A setup of the suite's app.
    static func setup(_ environment: AppStoreEnvironment, period: Int64 = LifecycleSetup.month, renewals: Int = 3) -> LifecycleSetup {
        LifecycleSetup(
            originalTransactionID: "2000000000005000", start: fractionalNow, period: period, environment: environment,
            bundleID: BundleID(SimulationFixtures.bundleID), appAppleID: SimulationFixtures.appAppleID, renewals: renewals)
    }

    /// Every JWS a lifecycle makes the simulator sign: notifications, and the standalone transactions and renewal
    /// infos the app or the server API would deliver.
    static func signedPayloads(_ facts: [LedgerFact]) throws -> [String] {
        let appStore = AppStoreJWSSigner(chain: signer)
        return try facts.map { fact in
            switch fact {
            case .notification(let notification): try NotificationSigner(signer: appStore).sign(notification).signedPayload
            case .transaction(let transaction): try appStore.sign(transaction)
            case .renewalInfo(let renewalInfo): try appStore.sign(renewalInfo)
            }
        }
    }

    /// What is wrong with one signed payload (a notification with its nested JWS, a transaction or a renewal info)
    /// for `environment`; empty when it is shaped like Apple's.
    static func violations(of jws: String, environment: AppStoreEnvironment) throws -> [String] {
        let payload = try JSONValue.jwsPayload(jws)
        let members = payload.members
        var found: [String] = []
        func nested(_ json: JSONValue?, _ schema: [String: AppleModelSchema.FieldType], _ path: String) throws {
            guard let text = json?.string else { return }
            let object = try JSONValue.jwsPayload(text)
            found += AppleModelSchema.violations(of: object, against: schema, at: path)
            if object.members["environment"]?.string != environment.rawValue { found.append("\(path).environment is not \(environment.rawValue)") }
            if object.members["signedDate"] == nil { found.append("\(path) has no signedDate") }
        }
        if members["notificationType"] != nil {
            found += AppleModelSchema.violations(of: payload, against: AppleModelSchema.notification, at: "notification")
            for required in ["notificationUUID", "signedDate", "version", "data"] where members[required] == nil {
                found.append("notification has no \(required)")
            }
            let data = members["data"] ?? .object([:])
            found += AppleModelSchema.violations(of: data, against: AppleModelSchema.data, at: "data")
            if data.members["environment"]?.string != environment.rawValue { found.append("data.environment is not \(environment.rawValue)") }
            switch (environment, data.members["appAppleId"]) {
            case (.sandbox, .some): found.append("Sandbox data carries appAppleId (Apple omits it in Sandbox)")
            case (.production, .none): found.append("Production data has no appAppleId")
            default: break
            }
            if members["notificationType"]?.string == "CONSUMPTION_REQUEST", data.members["consumptionRequestReason"] == nil {
                found.append("CONSUMPTION_REQUEST without consumptionRequestReason")
            }
            try nested(data.members["signedTransactionInfo"], AppleModelSchema.transaction, "data.signedTransactionInfo")
            try nested(data.members["signedRenewalInfo"], AppleModelSchema.renewalInfo, "data.signedRenewalInfo")
        } else if members["autoRenewStatus"] != nil || members["autoRenewProductId"] != nil {
            try nested(.string(jws), AppleModelSchema.renewalInfo, "renewalInfo")
        } else {
            try nested(.string(jws), AppleModelSchema.transaction, "transaction")
        }
        return found
    }

    /// Every violation across `payloads`, prefixed with the payload's position.
    static func violations(of payloads: [String], environment: AppStoreEnvironment) throws -> [String] {
        try payloads.enumerated().flatMap { index, jws in try violations(of: jws, environment: environment).map { "#\(index): \($0)" } }
    }

    @Test("the schema accepts Apple's own decoded samples (so it is not stricter than Apple)")
    func schemaAcceptsApplesSamples() throws {
        func object(_ name: String) throws -> JSONValue { try JSONValue.parse(try AppleSampleModels.data(named: name)) }
        for name in ["signedNotification", "signedConsumptionRequestNotification"] {
            let notification = try object(name)
            #expect(AppleModelSchema.violations(of: notification, against: AppleModelSchema.notification, at: name).isEmpty)
            #expect(AppleModelSchema.violations(of: notification.members["data"]!, against: AppleModelSchema.data, at: name).isEmpty)
        }
        for name in ["signedTransaction", "signedTransactionWithRevocation"] {
            #expect(AppleModelSchema.violations(of: try object(name), against: AppleModelSchema.transaction, at: name) == [])
        }
        #expect(AppleModelSchema.violations(of: try object("signedRenewalInfo"), against: AppleModelSchema.renewalInfo, at: "renewal") == [])
    }

    @Test("the schema rejects what Apple never sends: fractional dates, numeric ids, unknown fields, null, a bad enum value")
    func schemaRejectsWhatAppleNeverSends() throws {
        let bad = try JSONValue.parse(
            Data(
                """
                {"signedDate":1637413628214.2627,"transactionId":23456,"price":"9.99","isUpgraded":null,\
                "type":"auto-renewable","appAccountToken":"not-a-uuid","surprise":1,"offerType":7}
                """.utf8))
        let violations = AppleModelSchema.violations(of: bad, against: AppleModelSchema.transaction, at: "t")
        for field in ["signedDate", "transactionId", "price", "isUpgraded", "type", "appAccountToken", "surprise", "offerType"] {
            #expect(violations.contains { $0.hasPrefix("t.\(field) ") }, "\(field): \(violations)")
        }
    }

    @Test("every lifecycle signs only Apple's fields with Apple's types", arguments: SimulatedLifecycle.allCases)
    func everyLifecycle(_ lifecycle: SimulatedLifecycle) throws {
        for environment in [AppStoreEnvironment.sandbox, .production] {
            let facts = lifecycle.facts(Self.setup(environment), endingAt: Self.fractionalNow)
            let payloads = try Self.signedPayloads(facts)
            #expect(!payloads.isEmpty)
            let violations = try Self.violations(of: payloads, environment: environment)
            #expect(violations.isEmpty, "\(lifecycle.rawValue) \(environment.rawValue): \(violations.prefix(10))")
        }
    }

    @Test(
        "long histories — 60 monthly, 156 weekly and 19 yearly renewals — and random plans sign Apple's shapes in whole milliseconds",
        arguments: [
            (SimulationPlan.Selection.lifecycle(.renewals), LifecycleSetup.month, 60),
            (.lifecycle(.renewals), LifecycleSetup.week, 156),
            (.lifecycle(.renewals), LifecycleSetup.year, 19),
            (.random, LifecycleSetup.month, 3),
            (.random, LifecycleSetup.week, 3),
        ])
    func plans(_ selection: SimulationPlan.Selection, period: Int64, renewals: Int) throws {
        for environment in [AppStoreEnvironment.sandbox, .production] {
            let plan = SimulationPlan(
                selection: selection, subscriptions: selection == .random ? 40 : 2, duplicateRate: 0.1, seed: 11,
                environment: environment, bundleID: BundleID(SimulationFixtures.bundleID), appAppleID: SimulationFixtures.appAppleID,
                period: period, renewals: renewals, now: Self.fractionalNow)
            let deliveries = try plan.deliveries(signer: NotificationSigner(signer: AppStoreJWSSigner(chain: Self.signer)))
            #expect(deliveries.count >= (selection == .random ? 40 : 2 * (renewals + 3)))
            let violations = try Self.violations(of: deliveries.map(\.notification.signedPayload), environment: environment)
            #expect(violations.isEmpty, "\(environment.rawValue): \(violations.prefix(10))")
            let range = try plan.signedDateRange()
            for delivery in deliveries {
                let date = try #require(delivery.notification.signedDate)
                #expect(date.isWholeMilliseconds)
                #expect(range.contains(date), "every signed date lies in the range the CA must cover")
            }
        }
    }

    @Test("the signer refuses a fractional date outside Xcode data, and lets Xcode data keep its fractions")
    func fractionalDatesAreRefusedOutsideXcode() throws {
        var builder = SubscriptionLifecycleBuilder(start: 1_700_000_000_000)
        builder.subscribe()
        guard case .notification(var fact) = try #require(builder.facts.first) else {
            Issue.record("not a notification")
            return
        }
        fact.payload.signedDate = Timestamp(millisecondsSince1970: 1_700_000_000_000.25)
        let signer = NotificationSigner(signer: AppStoreJWSSigner(chain: Self.signer))
        let error = #expect(throws: SimulationError.self) { try signer.sign(fact) }
        #expect(error?.code == .signing)
        #expect(error?.detail.contains("signedDate") == true)
        fact.payload.data?.environment = .xcode
        _ = try signer.sign(fact)
    }

    @Test("a fractional clock is rounded down to whole milliseconds by the builders")
    func buildersKeepWholeMilliseconds() {
        var builder = SubscriptionLifecycleBuilder(start: Self.fractionalNow)
        #expect(builder.now == Timestamp(millisecondsSince1970: 1_764_000_000_123))
        builder.now = Timestamp(millisecondsSince1970: 1_764_000_000_999.9)
        #expect(builder.now == Timestamp(millisecondsSince1970: 1_764_000_000_999))
        var purchases = PurchaseLifecycleBuilder(start: Self.fractionalNow)
        purchases.buy("com.example.coins", type: .consumable)
        let whole = purchases.facts.compactMap(\.signedDate).allSatisfy { $0.isWholeMilliseconds }
        #expect(whole)
    }
}
