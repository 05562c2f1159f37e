/// An integer-valued Apple enumeration that stays open: a value Apple adds tomorrow decodes as itself instead
/// of failing the whole payload. Conforming types encode and decode as a bare JSON integer and list the values
/// known today as static constants.
public protocol OpenIntegerValue: RawRepresentable<Int32>, Hashable, Sendable, Codable, CustomStringConvertible {
    /// Wraps any raw value, known or not.
    init(rawValue: Int32)
}

extension OpenIntegerValue {
    /// The raw value Apple sent.
    public var description: String { String(rawValue) }
}
