import Foundation
package import Logging
import Metrics
package import PostgresNIO
package import StoreLedgerCore
package import StoreLedgerStore
import StoreLedgerVerification

/// The one handler every input goes through: verify → record facts → project.
///
/// `prepare` verifies the outer JWS and every nested one (CPU only, no database); `apply` records
/// the verified facts and projects the rows that facts new to the ledger touch, under a per-row lock, in the
/// caller's transaction: a subscription's new facts merge into its stored fold state (``SubscriptionFoldState``) in
/// time independent of its history, and only when the state cannot decide exactly is the row refolded from all of
/// its facts; purchases (short histories) are refolded. A re-delivered fact projects nothing. Nothing unverified
/// reaches the read model: events that can never verify are rejected with the typed reason.
package struct LedgerHandler: EventHandler {
    /// The verifiers for the accepted apps and environments.
    package let verifiers: LedgerVerifiers
    /// Whether projecting enqueues outgoing webhook events for entitlement changes (off for rebuild's shadow).
    package var emitsWebhookEvents = true
    /// Decoded facts kept for refolds, shared by the process's handlers (`FACT_CACHE_SIZE`).
    package let factCache: DecodedFactCache
    /// Whether subscriptions merge new facts into their fold states (the default); off, every touched row is
    /// refolded from all of its facts (`storeledger rebuild --full-fold`, to check the incremental fold).
    package var foldsIncrementally = true

    /// Creates the handler; `factCache` defaults to a cache of its own with the default capacity.
    package init(verifiers: LedgerVerifiers, factCache: DecodedFactCache = DecodedFactCache()) {
        self.verifiers = verifiers
        self.factCache = factCache
    }

    /// Verifies and decodes one event.
    package func prepare(_ event: ClaimedEvent, logger: Logger) async -> PreparedEvent {
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
        // Apple's plain JSON is read without Codable (by verification itself, usually: DecodedPayload), and the
        // payload's text to store comes without the nested JWS texts (decoded and stored on their own; PostgreSQL
        // would strip them anyway).
        if let reason = Self.nulRejection([
            ("notification", verified.payloadJSON), ("signedTransactionInfo", verified.transaction?.payloadJSON),
            ("signedRenewalInfo", verified.renewalInfo?.payloadJSON),
        ]) {
            return .rejected(event, reason: reason)
        }
        let (payload, withoutNestedJWS) = try verified.payloadStrippingNestedJWS()
        guard payload.notificationUUID != nil else {
            return .rejected(event, reason: "malformed: the notification has no notificationUUID")
        }
        let fact = NotificationFact(
            payload: payload,
            transaction: try verified.transaction.map { try $0.transactionPayload() },
            renewalInfo: try verified.renewalInfo.map { try $0.renewalInfoPayload() }
        )
        let bytes = PreparedEvent.VerifiedBytes(
            payload: verified.payloadJSON, contentDigest: verified.signingInputDigest, payloadWithoutNestedJWS: withoutNestedJWS,
            transaction: verified.transaction?.payloadJSON, renewalInfo: verified.renewalInfo?.payloadJSON
        )
        return .notification(event, fact, bytes)
    }

    /// A client or Server API body: `{"signedTransaction"|"signedTransactionInfo": jws}` or `{"signedRenewalInfo": jws}`.
    private func prepareSignedData(_ event: ClaimedEvent) async throws -> PreparedEvent {
        guard let object = try? JSONSerialization.jsonObject(with: Data(event.body.readableBytesView)) as? [String: Any] else {
            return .rejected(event, reason: "malformed: the body is not a JSON object")
        }
        if let jws = (object["signedTransaction"] ?? object["signedTransactionInfo"]) as? String {
            let verified = try await verifiers.verifyTransaction(jws)
            if let reason = Self.nulRejection([("transaction", verified.payloadJSON)]) { return .rejected(event, reason: reason) }
            return .signedData(event, .transaction(try verified.transactionPayload()), verified.payloadJSON)
        }
        if let jws = object["signedRenewalInfo"] as? String {
            let verified = try await verifiers.verifyRenewalInfo(jws)
            if let reason = Self.nulRejection([("renewal info", verified.payloadJSON)]) { return .rejected(event, reason: reason) }
            return .signedData(event, .renewalInfo(try verified.renewalInfoPayload()), verified.payloadJSON)
        }
        return .rejected(event, reason: "malformed: the body has no signedTransaction or signedRenewalInfo")
    }

    /// The rejection reason when one of the verified payloads (named) holds a NUL character, which PostgreSQL cannot
    /// store in the fact tables (``JSONEscapes/containsNUL(_:)``); nil when none does. Rejected, not retried: every
    /// attempt would fail the same way, and the event's raw bytes stay in the log.
    private static func nulRejection(_ payloads: [(name: String, json: Data?)]) -> String? {
        guard let holder = payloads.first(where: { $0.json.map(JSONEscapes.containsNUL) ?? false }) else { return nil }
        return "malformed: the verified \(holder.name) payload holds a NUL character (\\u0000), which the ledger's tables cannot store "
            + "(PostgreSQL keeps no NUL in jsonb or text); the raw body stays in the event log"
    }

    /// Records the batch's facts and refolds every row they touch.
    package func apply(_ batch: [PreparedEvent], in transaction: PostgresConnection, logger: Logger) async throws -> [EventOutcome] {
        var outcomes: [EventOutcome] = []
        var facts = FactBatch()
        for prepared in batch {
            switch prepared {
            case .rejected(_, let reason):
                outcomes.append(.reject(reason: reason))
            case .retry(_, let reason):
                outcomes.append(.retry(reason: reason))
            case .notification(let event, let fact, let bytes):
                guard let uuid = fact.notificationUUID else {
                    outcomes.append(.reject(reason: "malformed: no notificationUUID"))
                    continue
                }
                facts.addNotification(
                    fact, uuid: uuid, contentDigest: bytes.contentDigest, payloadJSON: bytes.payload,
                    payloadWithoutNestedJWS: bytes.payloadWithoutNestedJWS,
                    transactionJSON: bytes.transaction,
                    renewalInfoJSON: bytes.renewalInfo, eventID: event.id
                )
                outcomes.append(.done)
            case .signedData(let event, let fact, let bytes):
                switch fact {
                case .renewalInfo(let renewalInfo):
                    facts.addRenewalInfo(renewalInfo, payloadJSON: bytes, eventID: event.id)
                case .transaction(let transaction):
                    facts.addTransaction(transaction, payloadJSON: bytes, eventID: event.id)
                case .notification:
                    outcomes.append(.reject(reason: "malformed: a notification where signed data was expected"))
                    continue
                }
                outcomes.append(.done)
            }
        }
        // One statement per fact table, then one lock, one read and one upsert for the rows new facts touch.
        let newFacts = try await FactStore.record(facts, on: transaction, cache: factCache, logger: logger)
        try await Self.project(
            newFacts, incrementally: foldsIncrementally, emitWebhookEvents: emitsWebhookEvents, factCache: factCache, on: transaction, logger: logger
        )
        return outcomes
    }

    /// Projects facts just recorded as new: each subscription they touch merges them into its fold state (or is
    /// refolded from all of its facts when the state cannot decide, has none, or `incrementally` is off), each purchase
    /// is refolded. Rows are locked in a fixed order so concurrent workers cannot deadlock, and each sees every fact
    /// committed before it. With `emitWebhookEvents`, each entitlement change is enqueued for outgoing webhooks in the
    /// same transaction.
    package static func project(
        _ newFacts: [LedgerFact], incrementally: Bool = true, emitWebhookEvents: Bool = true,
        factCache: DecodedFactCache, on connection: PostgresConnection, logger: Logger
    ) async throws {
        var bySubscription: [SubscriptionKey: [LedgerFact]] = [:]
        var purchases: Set<PurchaseKey> = []
        for fact in newFacts {
            if let key = fact.subscriptionKey { bySubscription[key, default: []].append(fact) }
            if let key = fact.purchaseKey { purchases.insert(key) }
        }
        let subscriptionKeys = bySubscription.keys.sorted()
        let purchaseKeys = purchases.sorted()
        try await ReadModelStore.lock(
            subscriptionKeys.map { ReadModelStore.lockKey($0, of: SubscriptionState.self) }
                + purchaseKeys.map { ReadModelStore.lockKey($0, of: PurchaseState.self) }, on: connection, logger: logger
        )
        var events: [WebhookEvent] = []
        if !subscriptionKeys.isEmpty {
            var rows: [SubscriptionKey: SubscriptionState?] = [:]
            var states: [SubscriptionKey: SubscriptionFoldState?] = [:]
            var refold: [SubscriptionKey] = []
            let stored =
                incrementally
                ? try await FoldStateStore.subscriptionStates(subscriptionKeys, cache: factCache.foldStates, on: connection, logger: logger) : [:]
            for key in subscriptionKeys {
                // No state and no row: the subscription's first facts, merged into an empty state.
                let base = stored[key].flatMap { $0.state ?? ($0.hasRow ? nil : SubscriptionFoldState(key: key)) }
                if let base, let merged = SubscriptionProjection.merge(bySubscription[key] ?? [], into: base) {
                    rows.updateValue(merged.row, forKey: key)
                    states.updateValue(merged.state, forKey: key)
                } else {
                    refold.append(key)
                }
            }
            if !refold.isEmpty {
                Counter(label: "storeledger_projection_refolds_total").increment(by: refold.count)
                let facts = try await FactStore.subscriptionFacts(refold, on: connection, cache: factCache, logger: logger)
                for key in refold {
                    let folded = SubscriptionProjection.foldWithState(facts[key] ?? [], key: key)
                    rows.updateValue(folded.row, forKey: key)
                    states.updateValue(folded.state, forKey: key)
                }
            }
            events += try await write(
                rows, foldStates: states, emitWebhookEvents: emitWebhookEvents, cache: factCache.foldStates, on: connection, logger: logger)
        }
        events += try await refoldPurchases(purchaseKeys, emitWebhookEvents: emitWebhookEvents, factCache: factCache, on: connection, logger: logger)
        // One enqueue for both kinds, after every row is written: it takes its purchases' and tokens' locks in one
        // sorted order (two calls would take one kind's tokens before the other's purchases), and reads `entitled` from
        // the rows as written.
        try await WebhookOutbox.enqueue(events, on: connection, logger: logger)
    }

    /// Refolds the given rows from all of their recorded facts (and stores the subscriptions' fold states afresh).
    /// Rows are locked in a fixed order so concurrent workers cannot deadlock, and each fold sees every fact
    /// committed before it. With `emitWebhookEvents`, each entitlement change (old row → new row) is enqueued for
    /// outgoing webhooks in the same transaction. Facts `factCache` holds decoded are not fetched again.
    package static func project(
        subscriptions: Set<SubscriptionKey>, purchases: Set<PurchaseKey>, emitWebhookEvents: Bool = true,
        factCache: DecodedFactCache, on connection: PostgresConnection, logger: Logger
    ) async throws {
        let subscriptionKeys = subscriptions.sorted()
        let purchaseKeys = purchases.sorted()
        try await ReadModelStore.lock(
            subscriptionKeys.map { ReadModelStore.lockKey($0, of: SubscriptionState.self) }
                + purchaseKeys.map { ReadModelStore.lockKey($0, of: PurchaseState.self) }, on: connection, logger: logger
        )
        var events: [WebhookEvent] = []
        if !subscriptionKeys.isEmpty {
            let facts = try await FactStore.subscriptionFacts(subscriptionKeys, on: connection, cache: factCache, logger: logger)
            var states: [SubscriptionKey: SubscriptionState?] = [:]
            var foldStates: [SubscriptionKey: SubscriptionFoldState?] = [:]
            for key in subscriptionKeys {
                let folded = SubscriptionProjection.foldWithState(facts[key] ?? [], key: key)
                states.updateValue(folded.row, forKey: key)
                foldStates.updateValue(folded.state, forKey: key)
            }
            events += try await write(
                states, foldStates: foldStates, emitWebhookEvents: emitWebhookEvents, cache: factCache.foldStates, on: connection, logger: logger)
        }
        events += try await refoldPurchases(purchaseKeys, emitWebhookEvents: emitWebhookEvents, factCache: factCache, on: connection, logger: logger)
        try await WebhookOutbox.enqueue(events, on: connection, logger: logger)
    }

    /// Writes subscription rows and their fold states (the rows' keys are locked); returns the webhook events of their
    /// entitlement changes when `emitWebhookEvents`, for the caller to enqueue.
    private static func write(
        _ rows: [SubscriptionKey: SubscriptionState?], foldStates: [SubscriptionKey: SubscriptionFoldState?], emitWebhookEvents: Bool,
        cache: FoldStateCache, on connection: PostgresConnection, logger: Logger
    ) async throws -> [WebhookEvent] {
        let events = try await write(rows, emitWebhookEvents: emitWebhookEvents, on: connection, logger: logger)
        try await FoldStateStore.write(foldStates, cache: cache, on: connection, logger: logger)
        return events
    }

    /// Refolds the (locked) purchases from all of their facts and writes them; returns the webhook events of their
    /// entitlement changes when `emitWebhookEvents`, for the caller to enqueue.
    private static func refoldPurchases(
        _ keys: [PurchaseKey], emitWebhookEvents: Bool, factCache: DecodedFactCache, on connection: PostgresConnection, logger: Logger
    ) async throws -> [WebhookEvent] {
        guard !keys.isEmpty else { return [] }
        let facts = try await FactStore.purchaseFacts(keys, on: connection, cache: factCache, logger: logger)
        var states: [PurchaseKey: PurchaseState?] = [:]
        for key in keys { states.updateValue(PurchaseState.fold(facts[key] ?? [], key: key), forKey: key) }
        return try await write(states, emitWebhookEvents: emitWebhookEvents, on: connection, logger: logger)
    }

    /// Writes rows of one kind (their keys are locked); returns the webhook events of their entitlement changes (old
    /// row → new row) when `emitWebhookEvents` and an endpoint is active: one path for subscriptions and purchases. The
    /// caller enqueues them once every row is written (the outbox reads `entitled` from the rows as written).
    private static func write<State: StoredRow>(
        _ rows: [State.Key: State?], emitWebhookEvents: Bool, on connection: PostgresConnection, logger: Logger
    ) async throws -> [WebhookEvent] {
        let keys = rows.keys.sorted()
        var events: [WebhookEvent] = []
        if emitWebhookEvents, let old: [State.Key: State] = try await ReadModelStore.currentIfWebhooksActive(keys, on: connection, logger: logger) {
            events = keys.flatMap { WebhookOutbox.events(old: old[$0], new: rows[$0] ?? nil) }
        }
        try await ReadModelStore.write(rows, on: connection, logger: logger)
        return events
    }
}
