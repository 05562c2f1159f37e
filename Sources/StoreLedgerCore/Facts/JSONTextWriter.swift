/// Writes JSON text directly as UTF-8 bytes: for the texts the worker writes for every row it projects (fold states,
/// read-model rows), where `JSONEncoder`'s generic `Codable` machinery, `[String: Any]` rows and `String` appends
/// cost more than the rest of the write.
///
/// The caller gives the structure (``object(_:)``, ``array(_:)``, ``key(_:)``, values); separators are the writer's.
public struct JSONTextWriter: Sendable {
    /// The UTF-8 text so far (bytes are cheaper to append to than a `String`).
    public private(set) var bytes: [UInt8] = []
    /// Whether a number could not be written (not finite; `null` was written in its place).
    public private(set) var failed = false
    /// Whether the next member of the open object, or element of the open array, is its first.
    private var first = true

    /// An empty text with room for `capacity` bytes.
    public init(capacity: Int = 1024) {
        bytes.reserveCapacity(capacity)
    }

    /// The text written.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Appends `text`'s UTF-8 bytes as they are.
    private mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// An object whose members `body` writes.
    public mutating func object(_ body: (inout JSONTextWriter) throws -> Void) rethrows {
        bytes.append(UInt8(ascii: "{"))
        first = true
        try body(&self)
        bytes.append(UInt8(ascii: "}"))
        first = false
    }

    /// An array whose elements `body` writes, each after ``element()``.
    public mutating func array(_ body: (inout JSONTextWriter) throws -> Void) rethrows {
        bytes.append(UInt8(ascii: "["))
        first = true
        try body(&self)
        bytes.append(UInt8(ascii: "]"))
        first = false
    }

    /// Starts an element of the open array (then write its value).
    public mutating func element() {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
    }

    /// A member's key written in the source (then write its value): its bytes are appended straight from the
    /// literal, with no `String` made, unless it holds a quote, a backslash or a control character (then it is
    /// escaped as any string). A fold state and a row write dozens of keys each.
    public mutating func key(_ name: StaticString) {
        element()
        if !name.withUTF8Buffer({ appendQuotedIfPlain($0) }) { string(name.description) }
        bytes.append(UInt8(ascii: ":"))
    }

    /// A member's key known only at run time (a transaction id, a column's name), escaped as any string.
    public mutating func key(string name: String) {
        element()
        string(name)
        bytes.append(UInt8(ascii: ":"))
    }

    /// A string member.
    public mutating func field(_ name: StaticString, _ value: String) {
        key(name)
        string(value)
    }

    /// A Boolean member.
    public mutating func field(_ name: StaticString, _ value: Bool) {
        key(name)
        bool(value)
    }

    /// A number member (`Double`, as `Timestamp` encodes).
    public mutating func field(_ name: StaticString, number value: Double) {
        key(name)
        number(value)
    }

    /// An integer member.
    public mutating func field(_ name: StaticString, integer value: Int64) {
        key(name)
        integer(value)
    }

    /// `null`.
    public mutating func null() { append("null") }

    /// `true` or `false`.
    public mutating func bool(_ value: Bool) { value ? append("true") : append("false") }

    /// An integer, in decimal.
    public mutating func integer(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        digits(value.magnitude, width: 1)
    }

    /// A finite number: an integer when whole (as `Timestamp` encodes), else the shortest text that reads back
    /// exactly; not finite, `null` and ``failed``.
    public mutating func number(_ value: Double) {
        if !value.isFinite {
            failed = true
            null()
        } else if let whole = Int64(exactly: value) {
            integer(whole)
        } else {
            bytes.append(contentsOf: "\(value)".utf8)
        }
    }

    /// A string literal (RFC 8259 §7: quote, backslash and control characters escaped).
    public mutating func string(_ value: String) {
        // Almost every value needs no escape: then it is appended whole, not scalar by scalar (from the string's own
        // UTF-8 storage when it has one: a plain loop over bytes, no iterator).
        if value.utf8.withContiguousStorageIfAvailable({ appendQuotedIfPlain($0) }) == true { return }
        bytes.append(UInt8(ascii: "\""))
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": append("\\\"")
            case "\\": append("\\\\")
            case "\n": append("\\n")
            case "\r": append("\\r")
            case "\t": append("\\t")
            case _ where scalar.value < 0x20:
                append("\\u00")
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(hex[Int(scalar.value >> 4)])
                bytes.append(hex[Int(scalar.value & 0x0F)])
            default: bytes.append(contentsOf: String(scalar).utf8)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends `utf8` between quotes and returns true when none of its bytes needs an escape (a quote, a backslash or
    /// a control character); appends nothing and returns false otherwise. Shared by string values and literal keys.
    private mutating func appendQuotedIfPlain(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: utf8)
        bytes.append(UInt8(ascii: "\""))
        return true
    }

    /// An instant as an ISO 8601 UTC string with milliseconds (`"2026-11-22T08:30:00.123Z"`; PostgreSQL reads it as
    /// `timestamptz`), from its epoch milliseconds rounded to the millisecond with the proleptic Gregorian calendar.
    public mutating func isoTimestamp(_ timestamp: Timestamp) {
        let milliseconds = timestamp.storedMilliseconds
        let (days, remainder) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        let (day, msOfDay) = remainder < 0 ? (days - 1, remainder + 86_400_000) : (days, remainder)
        // Days since 1970-01-01 to a civil date (Howard Hinnant's days_from_civil, inverted).
        let z = day + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let dayOfMonth = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        bytes.append(UInt8(ascii: "\""))
        if year < 0 { bytes.append(UInt8(ascii: "-")) }
        digits(year.magnitude, width: 4)
        bytes.append(UInt8(ascii: "-"))
        digits(UInt64(month), width: 2)
        bytes.append(UInt8(ascii: "-"))
        digits(UInt64(dayOfMonth), width: 2)
        bytes.append(UInt8(ascii: "T"))
        digits(UInt64(msOfDay / 3_600_000), width: 2)
        bytes.append(UInt8(ascii: ":"))
        digits(UInt64(msOfDay / 60_000 % 60), width: 2)
        bytes.append(UInt8(ascii: ":"))
        digits(UInt64(msOfDay / 1000 % 60), width: 2)
        bytes.append(UInt8(ascii: "."))
        digits(UInt64(msOfDay % 1000), width: 3)
        append("Z\"")
    }

    /// `value` in decimal, left-padded with zeros to at least `width` digits (at most 20: `UInt64.max` has 20). The
    /// digits are written from the last into a buffer on the stack and appended at once: a fold state and a row hold
    /// dozens of epoch-millisecond numbers, and appending them digit by digit, then reversing, was a hundredth of the
    /// worker's CPU.
    private mutating func digits(_ value: UInt64, width: Int) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var start = buffer.count
            var rest = value
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            while start > buffer.count - width && start > 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "0")
            }
            bytes.append(contentsOf: UnsafeMutableBufferPointer(rebasing: buffer[start...]))
        }
    }
}
