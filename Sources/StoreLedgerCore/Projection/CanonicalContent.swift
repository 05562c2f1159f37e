/// The canonical JSON of one decoded payload, encoded on first use and kept.
///
/// Canonical content only breaks exact ties (the same signed instant and rank) and names transactions that have
/// no id, so a fold almost never needs it; encoding it eagerly for every fact was a quarter of a worker's time.
/// Orders like the string it stands for; one fold's values never cross threads.
final class CanonicalContent: Comparable {
    private let encode: () -> String
    private var encoded: String?

    /// The canonical content of `value`, not yet encoded.
    init(of value: some Encodable) {
        encode = { CanonicalJSON.string(value) }
    }

    /// The canonical JSON, encoded now if it was not before.
    var string: String {
        if let encoded { return encoded }
        let string = encode()
        encoded = string
        return string
    }

    /// Whether both stand for the same JSON (the same object is equal without encoding).
    static func == (lhs: CanonicalContent, rhs: CanonicalContent) -> Bool {
        lhs === rhs || lhs.string == rhs.string
    }

    /// Orders by the canonical JSON.
    static func < (lhs: CanonicalContent, rhs: CanonicalContent) -> Bool {
        lhs !== rhs && lhs.string < rhs.string
    }
}
