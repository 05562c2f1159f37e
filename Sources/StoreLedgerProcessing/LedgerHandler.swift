import Foundation
public import Logging
import Metrics
public import PostgresNIO
public import StoreLedgerCore
public import StoreLedgerStore
import StoreLedgerVerification

/// The one handler every input goes through: verify → record facts → project.
///
/// `prepare` verifies the outer JWS and every nested one (CPU only, no database); `apply` records
/// the verified facts and refolds each affected subscription or purchase from all of its facts,
/// under a per-row lock, in the caller's transaction. Nothing unverified reaches the read model:
/// events that can never verify are rejected with the typed reason.
public struct LedgerHandler: EventHandler {
    /// The verifiers for the accepted apps and environments.
    public let verifiers: LedgerVerifiers
    /// Whether projecting enqueues outgoing webhook events for entitlement changes (off for rebuild's shadow).
    public var emitsWebhookEvents = true
    /// Decoded facts kept for refolds, shared by the process's handlers (`FACT_CACHE_SIZE`).
    public let factCache: DecodedFactCache

    /// Creates the handler; `factCache` defaults to a cache of its own with the default capacity.
    public init(verifiers: LedgerVerifiers, factCache: DecodedFactCache = DecodedFactCache()) {
        self.verifiers = verifiers
        self.factCache = factCache
    }

    /// Verifies and decodes one event.
    public func prepare(_ event: ClaimedEvent, logger: Logger) async -> PreparedEvent {
        do {
            switch event.source {
            case .appleNotification, .reconciliation:
                let envelope: NotificationEnvelope
                do {
                    envelope = try NotificationEnvelope.parse(event.body.readableBytesView)
                } catch {
                    return .rejected(event, reason: "malformed: \(error.description)")
                }
                let verified = try await verifiers.verifyNotification(envelope.signedPayload)
                return try decode(verified, event: event)
            case .client, .serverAPI:
                return try await prepareSignedData(event)
            }
        } catch let error as VerificationError {
            if error.isRetryable { return .retry(event, reason: error.description) }
            Counter(label: "storeledger_verification_failures_total", dimensions: [("reason", "\(error.code)")]).increment()
            logger.notice("event rejected", metadata: ["event": "\(event.id)", "reason": "\(error)"])
            return .rejected(event, reason: error.description)
        } catch {
            return .rejected(event, reason: "malformed: the verified payload does not decode: \(error)")
        }
    }

    private func decode(_ verified: VerifiedNotification, event: ClaimedEvent) throws -> PreparedEvent {
        let decoder = JSONDecoder()
        let payload = try decoder.decode(NotificationPayload.self, from: verified.payloadJSON)
        guard payload.notificationUUID != nil else {
            return .rejected(event, reason: "malformed: the notification has no notificationUUID")
        }
        let fact = NotificationFact(
            payload: payload,
            transaction: try verified.transaction.map { try decoder.decode(TransactionPayload.self, from: $0.payloadJSON) },
            renewalInfo: try verified.renewalInfo.map { try decoder.decode(RenewalInfoPayload.self, from: $0.payloadJSON) }
        )
        let bytes = PreparedEvent.VerifiedBytes(
            payload: verified.payloadJSON, transaction: verified.transaction?.payloadJSON, renewalInfo: verified.renewalInfo?.payloadJSON
        )
        return .notification(event, fact, bytes)
    }

    /// A client or Server API body: `{"signedTransaction"|"signedTransactionInfo": jws}` or `{"signedRenewalInfo": jws}`.
    private func prepareSignedData(_ event: ClaimedEvent) async throws -> PreparedEvent {
        guard let object = try? JSONSerialization.jsonObject(with: Data(event.body.readableBytesView)) as? [String: Any] else {
            return .rejected(event, reason: "malformed: the body is not a JSON object")
        }
        let decoder = JSONDecoder()
        if let jws = (object["signedTransaction"] ?? object["signedTransactionInfo"]) as? String {
            let verified = try await verifiers.verifyTransaction(jws)
            return .signedData(event, .transaction(try decoder.decode(TransactionPayload.self, from: verified.payloadJSON)), verified.payloadJSON)
        }
        if let jws = object["signedRenewalInfo"] as? String {
            let verified = try await verifiers.verifyRenewalInfo(jws)
            return .signedData(event, .renewalInfo(try decoder.decode(RenewalInfoPayload.self, from: verified.payloadJSON)), verified.payloadJSON)
        }
        return .rejected(event, reason: "malformed: the body has no signedTransaction or signedRenewalInfo")
    }

    /// Records the batch's facts and refolds every row they touch.
    public func apply(_ batch: [PreparedEvent], in transaction: PostgresConnection, logger: Logger) async throws -> [EventOutcome] {
        var outcomes: [EventOutcome] = []
        var facts = FactBatch()
        var subscriptions: Set<SubscriptionKey> = []
        var purchases: Set<PurchaseKey> = []
        for prepared in batch {
            switch prepared {
            case .rejected(_, let reason):
                outcomes.append(.reject(reason: reason))
            case .retry(_, let reason):
                outcomes.append(.retry(reason: reason))
            case .notification(let event, let fact, let bytes):
                guard let uuid = fact.payload.notificationUUID else { outcomes.append(.reject(reason: "malformed: no notificationUUID")); continue }
                facts.addNotification(
                    fact, uuid: uuid, payloadJSON: bytes.payload, transactionJSON: bytes.transaction,
                    renewalInfoJSON: bytes.renewalInfo, eventID: event.id
                )
                collectKeys(of: .notification(fact), subscriptions: &subscriptions, purchases: &purchases)
                outcomes.append(.done)
            case .signedData(let event, let fact, let bytes):
                switch fact {
                case .renewalInfo(let renewalInfo):
                    facts.addRenewalInfo(renewalInfo, payloadJSON: bytes, standalone: true, eventID: event.id)
                case .transaction(let transaction):
                    facts.addTransaction(transaction, payloadJSON: bytes, standalone: true, eventID: event.id)
                case .notification:
                    outcomes.append(.reject(reason: "malformed: a notification where signed data was expected"))
                    continue
                }
                collectKeys(of: fact, subscriptions: &subscriptions, purchases: &purchases)
                outcomes.append(.done)
            }
        }
        // One statement per fact table, then one lock, one read and one upsert for all touched rows.
        try await FactStore.record(facts, on: transaction, cache: factCache, logger: logger)
        try await Self.project(
            subscriptions: subscriptions, purchases: purchases, emitWebhookEvents: emitsWebhookEvents, factCache: factCache, on: transaction, logger: logger
        )
        return outcomes
    }

    private func collectKeys(of fact: LedgerFact, subscriptions: inout Set<SubscriptionKey>, purchases: inout Set<PurchaseKey>) {
        if let key = fact.subscriptionKey { subscriptions.insert(key) }
        if let key = fact.purchaseKey { purchases.insert(key) }
    }

    /// Refolds the given rows from all of their recorded facts. Rows are locked in a fixed order so
    /// concurrent workers cannot deadlock, and each fold sees every fact committed before it. With
    /// `emitWebhookEvents`, each entitlement change (old row → new row) is enqueued for outgoing webhooks in the
    /// same transaction. Facts `factCache` holds decoded are not fetched again.
    public static func project(
        subscriptions: Set<SubscriptionKey>, purchases: Set<PurchaseKey>, emitWebhookEvents: Bool = true,
        factCache: DecodedFactCache, on connection: PostgresConnection, logger: Logger
    ) async throws {
        let subscriptionKeys = subscriptions.sorted()
        let purchaseKeys = purchases.sorted()
        try await ReadModelStore.lock(
            subscriptionKeys.map { "subscription/\($0)" } + purchaseKeys.map { "purchase/\($0)" }, on: connection, logger: logger
        )
        if !subscriptionKeys.isEmpty {
            let facts = try await FactStore.subscriptionFacts(subscriptionKeys, on: connection, cache: factCache, logger: logger)
            var states: [SubscriptionKey: SubscriptionState?] = [:]
            for key in subscriptionKeys { states.updateValue(SubscriptionProjection.fold(facts[key] ?? [], key: key), forKey: key) }
            var events: [WebhookEvent] = []
            if emitWebhookEvents, let old = try await ReadModelStore.currentSubscriptionsIfWebhooksActive(subscriptionKeys, on: connection, logger: logger) {
                events = subscriptionKeys.flatMap { WebhookOutbox.events(old: old[$0], new: states[$0] ?? nil) }
            }
            try await ReadModelStore.write(states, on: connection, logger: logger)
            // After the write: the outbox reads `entitled` from the new rows (entitlements_at).
            try await WebhookOutbox.enqueue(events, on: connection, logger: logger)
        }
        if !purchaseKeys.isEmpty {
            let facts = try await FactStore.purchaseFacts(purchaseKeys, on: connection, cache: factCache, logger: logger)
            var states: [PurchaseKey: PurchaseState?] = [:]
            for key in purchaseKeys { states.updateValue(PurchaseProjection.fold(facts[key] ?? [], key: key), forKey: key) }
            var events: [WebhookEvent] = []
            if emitWebhookEvents, let old = try await ReadModelStore.currentPurchasesIfWebhooksActive(purchaseKeys, on: connection, logger: logger) {
                events = purchaseKeys.flatMap { WebhookOutbox.events(old: old[$0], new: states[$0] ?? nil) }
            }
            try await ReadModelStore.write(states, on: connection, logger: logger)
            try await WebhookOutbox.enqueue(events, on: connection, logger: logger)
        }
    }
}
