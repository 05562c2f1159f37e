import Foundation

/// A canonical JSON rendering (sorted keys) of decoded payloads: a deterministic last-resort tie-break and a
/// content identity that, unlike `hashValue`, is the same in every process.
enum CanonicalJSON {
    /// The canonical JSON of any encodable value, or "" if it cannot be encoded.
    static func string(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The canonical JSON of a fact, prefixed by its kind so different kinds never collide.
    static func string(_ fact: LedgerFact) -> String {
        switch fact {
        case .notification(let notification): "N" + string(notification)
        case .transaction(let transaction): "T" + string(transaction)
        case .renewalInfo(let renewalInfo): "R" + string(renewalInfo)
        }
    }
}
