/// A string-valued Apple enumeration that stays open: a value Apple adds tomorrow decodes as itself instead of
/// failing the whole payload. Conforming types encode and decode as a bare JSON string and list the values
/// known today as static constants.
public protocol OpenStringValue: RawRepresentable<String>, Hashable, Sendable, Codable, CustomStringConvertible {
    /// Wraps any raw value, known or not.
    init(rawValue: String)
}

extension OpenStringValue {
    /// The raw value Apple sent.
    public var description: String { rawValue }
}
