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
        let eventID: Int64
        let uuid: String
        let payload: String
        let transaction: String?
        let renewalInfo: String?
    }

    /// A distinct transaction or renewal info.
    struct SignedFact: Sendable {
        let digestHex: String
        let payload: String
        var standalone: Bool
        var firstEventID: Int64
    }

    private(set) var notifications: [Notification] = []
    private(set) var transactions: [String: SignedFact] = [:]
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
