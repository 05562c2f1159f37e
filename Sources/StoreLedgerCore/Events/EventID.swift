/// The identity of one event in the append-only log (`events.id`).
public struct EventID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The database identity value.
    public let rawValue: Int64

    /// Wraps a database identity value.
    public init(_ rawValue: Int64) { self.rawValue = rawValue }

    /// Orders by log position.
    public static func < (lhs: EventID, rhs: EventID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The decimal id.
    public var description: String { String(rawValue) }

    /// Decodes from a bare integer.
    public init(from decoder: any Decoder) throws {
        self.rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }

    /// Encodes as a bare integer.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
