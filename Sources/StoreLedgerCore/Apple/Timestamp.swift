public import Foundation

/// An instant as Apple signs it: UNIX epoch milliseconds.
///
/// Backed by a `Double` because Xcode-signed data carries fractional milliseconds (`1697679936049.7297`);
/// whole milliseconds (everything the App Store signs) are exact. Encodes as a bare JSON number: an integer
/// when the value is whole, so App Store payloads round-trip byte for byte.
public struct Timestamp: Hashable, Sendable, Comparable, Codable, CustomStringConvertible,
    ExpressibleByIntegerLiteral
{
    /// Milliseconds since 1970-01-01T00:00:00Z, possibly fractional.
    public let millisecondsSince1970: Double

    /// Wraps epoch milliseconds.
    public init(millisecondsSince1970: Double) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    /// Wraps whole epoch milliseconds written as a literal.
    public init(integerLiteral value: Int64) {
        self.millisecondsSince1970 = Double(value)
    }

    /// The instant of a `Date`.
    public init(_ date: Date) {
        self.millisecondsSince1970 = date.timeIntervalSince1970 * 1000
    }

    /// The instant in whole milliseconds, rounded as the read model stores it (`timestamptz` columns hold milliseconds):
    /// Xcode's fractional milliseconds compare with a stored value at this precision.
    public var storedMilliseconds: Int64 {
        Int64(millisecondsSince1970.rounded())
    }

    /// The instant as a `Date`.
    public var date: Date {
        Date(timeIntervalSince1970: millisecondsSince1970 / 1000)
    }

    /// The instant moved by a number of milliseconds (negative moves back).
    public func adding(milliseconds: Int64) -> Timestamp {
        Timestamp(millisecondsSince1970: millisecondsSince1970 + Double(milliseconds))
    }

    /// Orders instants chronologically.
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    /// Decodes a bare JSON number of epoch milliseconds, whole or fractional.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self.millisecondsSince1970 = try container.decode(Double.self)
    }

    /// Encodes a bare JSON number: an integer when whole, otherwise the fractional value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let whole = Int64(exactly: millisecondsSince1970) {
            try container.encode(whole)
        } else {
            try container.encode(millisecondsSince1970)
        }
    }

    /// The epoch milliseconds as Apple wrote them.
    public var description: String {
        if let whole = Int64(exactly: millisecondsSince1970) {
            return String(whole)
        }
        return String(millisecondsSince1970)
    }
}
