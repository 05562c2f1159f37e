import Foundation

/// A transaction id as clients send it: a JSON string, or a number (StoreKit's `Transaction.id` is a `UInt64`,
/// and seed 001's client encodes it as one).
struct FlexibleIdentifier: Decodable, Sendable {
    /// The id as a string.
    let value: String

    /// Decodes a string or an unsigned integer.
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            // A line break too: an id copied from a log or a text field with its newline.
            value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            value = String(try container.decode(UInt64.self))
        }
    }
}
