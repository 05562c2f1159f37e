package import Foundation
package import StoreLedgerCore

/// The verified facts of one claimed batch, gathered so that ``FactStore/record(_:on:logger:)`` writes each table
/// in one statement instead of one statement per fact.
///
/// Each fact keeps its decoded form beside the bytes to store, under the SHA-256 of the verified bytes (its
/// content digest), so that the refold that follows finds it decoded. Signed data repeated inside the batch (an
/// Apple retry carries the same nested transaction) is merged here: one row per distinct decoded payload,
/// standalone if any occurrence was, first seen at the lowest event id.
package struct FactBatch: Sendable {
    /// A notification delivered by one event.
    struct Notification: Sendable {
        /// The event that delivered it.
        let eventID: Int64
        /// Its notificationUUID.
        let uuid: String
        /// Its content digest, hex: the SHA-256 of the signed JWS's signing input (header and payload as received).
        let digestHex: String
        /// The decoded payload (JSON), possibly without its nested JWS texts.
        let payload: UTF8Text
        /// The decoded nested transaction (JSON), if any.
        let transaction: UTF8Text?
        /// The decoded nested renewal info (JSON), if any.
        let renewalInfo: UTF8Text?
        /// The decoded fact.
        let fact: LedgerFact
    }

    /// A distinct transaction or renewal info.
    struct SignedFact: Sendable {
        /// SHA-256 of the decoded payload, hex: the row's identity.
        let digestHex: String
        /// The decoded payload (JSON).
        let payload: UTF8Text
        /// The lowest event id it arrived in.
        var firstEventID: Int64
        /// The decoded fact, once an occurrence arrived on its own (nil while every one was nested: only standalone
        /// signed data is refolded or projected as a fact of its own; the nested is part of its notification's fact).
        var fact: LedgerFact?
        /// Whether any occurrence arrived on its own rather than nested.
        var standalone: Bool { fact != nil }
    }

    /// Every notification delivery, in the order added.
    private(set) var notifications: [Notification] = []
    /// Distinct transactions by digest.
    private(set) var transactions: [String: SignedFact] = [:]
    /// Distinct renewal infos by digest.
    private(set) var renewalInfos: [String: SignedFact] = [:]

    /// An empty batch.
    package init() {}

    /// Whether there is nothing to record.
    package var isEmpty: Bool { notifications.isEmpty && transactions.isEmpty && renewalInfos.isEmpty }

    /// Adds a verified notification delivered by `eventID`, decoded as `fact` from these verified bytes, with its
    /// nested signed data as facts of their own. `contentDigest` is the SHA-256 of the notification JWS's signing
    /// input, which the signature check computed (the payload is not hashed again: it names the same signed bytes).
    /// `payloadWithoutNestedJWS`, when given, is `payloadJSON` without `data.signedTransactionInfo` and
    /// `data.signedRenewalInfo` (``NotificationPayload/decodeStrippingNestedJWS(json:)``): the text sent to be stored
    /// (the stored row is the same: PostgreSQL strips those members from either).
    package mutating func addNotification(
        _ fact: NotificationFact, uuid: NotificationUUID, contentDigest: [UInt8], payloadJSON: Data, payloadWithoutNestedJWS: Data? = nil,
        transactionJSON: Data?, renewalInfoJSON: Data?, eventID: EventID
    ) {
        notifications.append(
            Notification(
                eventID: eventID.rawValue,
                uuid: uuid.rawValue,
                digestHex: SHA256Digest.hex(contentDigest),
                payload: UTF8Text(payloadWithoutNestedJWS ?? payloadJSON),
                transaction: transactionJSON.map(UTF8Text.init),
                renewalInfo: renewalInfoJSON.map(UTF8Text.init),
                fact: .notification(fact)
            ))
        // Nested signed data needs no fact of its own (and copying the decoded payload out of the notification's fact
        // retained each of its strings): only the row is added.
        if let transactionJSON, fact.hasTransaction {
            Self.merge(nil, transactionJSON, eventID: eventID, into: &transactions)
        }
        if let renewalInfoJSON, fact.hasRenewalInfo {
            Self.merge(nil, renewalInfoJSON, eventID: eventID, into: &renewalInfos)
        }
    }

    /// Adds a verified transaction that arrived on its own (not nested in a notification), decoded from `payloadJSON`.
    package mutating func addTransaction(_ transaction: TransactionPayload, payloadJSON: Data, eventID: EventID) {
        Self.merge(.transaction(transaction), payloadJSON, eventID: eventID, into: &transactions)
    }

    /// Adds a verified renewal info that arrived on its own (not nested in a notification), decoded from `payloadJSON`.
    package mutating func addRenewalInfo(_ renewalInfo: RenewalInfoPayload, payloadJSON: Data, eventID: EventID) {
        Self.merge(.renewalInfo(renewalInfo), payloadJSON, eventID: eventID, into: &renewalInfos)
    }

    /// The facts a refold reads back (notifications and standalone signed data; nested signed data is read as part
    /// of its notification) with their content digests, for the decoded-fact cache.
    var refoldedFacts: [(digestHex: String, fact: LedgerFact)] {
        notifications.map { ($0.digestHex, $0.fact) }
            + transactions.values.compactMap { signed in signed.fact.map { (signed.digestHex, $0) } }
            + renewalInfos.values.compactMap { signed in signed.fact.map { (signed.digestHex, $0) } }
    }

    /// The batch's facts that are new to the ledger, given what recording found new: each notification whose UUID
    /// was inserted (once, as first delivered in the batch), and each standalone transaction or renewal info whose
    /// content was. Nested signed data counts as part of its notification.
    func newFacts(notifications uuids: Set<String>, transactions: Set<String>, renewalInfos: Set<String>) -> [LedgerFact] {
        var facts: [LedgerFact] = []
        var seen: Set<String> = []
        for notification in notifications where uuids.contains(notification.uuid) && seen.insert(notification.uuid).inserted {
            facts.append(notification.fact)
        }
        for signed in self.transactions.values where transactions.contains(signed.digestHex) { signed.fact.map { facts.append($0) } }
        for signed in self.renewalInfos.values where renewalInfos.contains(signed.digestHex) { signed.fact.map { facts.append($0) } }
        return facts
    }

    /// One row per distinct signed content: the SHA-256 of the decoded bytes identifies it. `standalone` is the fact
    /// of an occurrence that arrived on its own, nil for a nested one.
    private static func merge(
        _ standalone: LedgerFact?, _ payloadJSON: Data, eventID: EventID, into facts: inout [String: SignedFact]
    ) {
        let digest = SHA256Digest.hex(of: payloadJSON)
        if let index = facts.index(forKey: digest) {
            facts.values[index].firstEventID = min(facts.values[index].firstEventID, eventID.rawValue)
            if facts.values[index].fact == nil { facts.values[index].fact = standalone }
        } else {
            facts[digest] = SignedFact(digestHex: digest, payload: UTF8Text(payloadJSON), firstEventID: eventID.rawValue, fact: standalone)
        }
    }
}
