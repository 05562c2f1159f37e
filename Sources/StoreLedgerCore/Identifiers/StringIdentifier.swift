/// A typed identifier that wraps a string, so ids of different kinds cannot be mixed up.
///
/// Apple sends its numeric ids (transaction ids, web order line item ids) as JSON strings; they are kept as
/// strings and never parsed as numbers. Conforming types encode as a bare JSON string. Decoding also accepts a
/// bare JSON integer, so a producer that sends a number instead of a string does not break decoding.
public protocol StringIdentifier: Hashable, Sendable, Codable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The identifier exactly as Apple sent it.
    var rawValue: String { get }

    /// Wraps a raw identifier string.
    init(_ rawValue: String)
}

extension StringIdentifier {
    /// Wraps a string literal.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// Decodes a bare JSON string (or, leniently, a bare JSON integer).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            self.init(string)
        } else {
            self.init(String(try container.decode(Int64.self)))
        }
    }

    /// Encodes as a bare JSON string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// Orders identifiers by their raw string, for deterministic tie-breaks.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// The raw identifier.
    public var description: String { rawValue }
}
