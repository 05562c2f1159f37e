import Crypto
public import Foundation
public import StoreLedgerCore

/// The verified facts of one claimed batch, gathered so that ``FactStore/record(_:on:logger:)`` writes each table
/// in one statement instead of one statement per fact.
///
/// Signed data repeated inside the batch (an Apple retry carries the same nested transaction) is merged here: one
/// row per distinct decoded payload, standalone if any occurrence was, first seen at the lowest event id.
public struct FactBatch: Sendable {
    /// A notification delivered by one event.
    struct Notification: Sendable {
        /// The event that delivered it.
        let eventID: Int64
        /// Its notificationUUID.
        let uuid: String
        /// The decoded payload (JSON).
        let payload: String
        /// The decoded nested transaction (JSON), if any.
        let transaction: String?
        /// The decoded nested renewal info (JSON), if any.
        let renewalInfo: String?
    }

    /// A distinct transaction or renewal info.
    struct SignedFact: Sendable {
        /// SHA-256 of the decoded payload, hex: the row's identity.
        let digestHex: String
        /// The decoded payload (JSON).
        let payload: String
        /// Whether any occurrence arrived on its own rather than nested.
        var standalone: Bool
        /// The lowest event id it arrived in.
        var firstEventID: Int64
    }

    /// Every notification delivery, in the order added.
    private(set) var notifications: [Notification] = []
    /// Distinct transactions by digest.
    private(set) var transactions: [String: SignedFact] = [:]
    /// Distinct renewal infos by digest.
    private(set) var renewalInfos: [String: SignedFact] = [:]

    /// An empty batch.
    public init() {}

    /// Whether there is nothing to record.
    public var isEmpty: Bool { notifications.isEmpty && transactions.isEmpty && renewalInfos.isEmpty }

    /// Adds a verified notification delivered by `eventID`, with its nested signed data as facts of their own.
    public mutating func addNotification(
        uuid: NotificationUUID, payloadJSON: Data, transactionJSON: Data?, renewalInfoJSON: Data?, eventID: EventID
    ) {
        notifications.append(Notification(
            eventID: eventID.rawValue,
            uuid: uuid.rawValue,
            payload: String(decoding: payloadJSON, as: UTF8.self),
            transaction: transactionJSON.map { String(decoding: $0, as: UTF8.self) },
            renewalInfo: renewalInfoJSON.map { String(decoding: $0, as: UTF8.self) }
        ))
        if let transactionJSON { addTransaction(payloadJSON: transactionJSON, standalone: false, eventID: eventID) }
        if let renewalInfoJSON { addRenewalInfo(payloadJSON: renewalInfoJSON, standalone: false, eventID: eventID) }
    }

    /// Adds a verified transaction; `standalone` when it arrived on its own rather than nested.
    public mutating func addTransaction(payloadJSON: Data, standalone: Bool, eventID: EventID) {
        Self.merge(payloadJSON, standalone: standalone, eventID: eventID, into: &transactions)
    }

    /// Adds a verified renewal info; `standalone` when it arrived on its own rather than nested.
    public mutating func addRenewalInfo(payloadJSON: Data, standalone: Bool, eventID: EventID) {
        Self.merge(payloadJSON, standalone: standalone, eventID: eventID, into: &renewalInfos)
    }

    /// One row per distinct signed content: the SHA-256 of the decoded bytes identifies it.
    private static func merge(_ payloadJSON: Data, standalone: Bool, eventID: EventID, into facts: inout [String: SignedFact]) {
        let digest = SHA256.hash(data: payloadJSON).map { byte in
            (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
        if var existing = facts[digest] {
            existing.standalone = existing.standalone || standalone
            existing.firstEventID = min(existing.firstEventID, eventID.rawValue)
            facts[digest] = existing
        } else {
            facts[digest] = SignedFact(
                digestHex: digest, payload: String(decoding: payloadJSON, as: UTF8.self),
                standalone: standalone, firstEventID: eventID.rawValue
            )
        }
    }
}
