import Foundation

/// The names of a JSON object's top-level members, in order and with repeats, as written in the text.
///
/// `JSONSerialization` keeps one value per name (the last one) and says nothing about repeats, so two readers of
/// the same bytes may disagree on what a body says. This reads the names themselves. It expects text that
/// `JSONSerialization` has already accepted as an object, and reads it as that parser does: UTF-8 with or without a
/// byte-order mark, or UTF-16/UTF-32 (recognised by their byte-order mark or the pattern of zero bytes, RFC 4627),
/// a trailing comma tolerated. Names are compared after unescaping (`"signed\u0050ayload"` is `signedPayload`).
enum JSONTopLevelKeys {
    /// The first top-level name that appears more than once (after unescaping; as Swift compares strings, which is
    /// how the decoded dictionary keys them), nil when every name is unique; throws when the text cannot be read.
    static func firstDuplicate(in data: Data) throws(Unreadable) -> String? {
        var seen: Set<String> = []
        for name in try names(in: data) where !seen.insert(name).inserted {
            return name
        }
        return nil
    }

    /// The top-level names of the object `data` holds, in order, repeats included.
    static func names(in data: Data) throws(Unreadable) -> [String] {
        let bytes = try utf8(data)
        var scanner = Scanner(bytes: bytes)
        return try scanner.objectNames()
    }

    /// The text is not a JSON object this reader understands.
    struct Unreadable: Error, Sendable {}

    /// `data` as UTF-8 bytes without a byte-order mark, transcoding UTF-16 and UTF-32 as `JSONSerialization` does.
    private static func utf8(_ data: Data) throws(Unreadable) -> [UInt8] {
        let bytes = [UInt8](data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return Array(bytes.dropFirst(3)) }
        guard let encoding = wideEncoding(of: bytes) else { return bytes }
        guard let text = String(data: data, encoding: encoding) else { throw Unreadable() }
        var utf8 = Array(text.utf8)
        if utf8.starts(with: [0xEF, 0xBB, 0xBF]) { utf8.removeFirst(3) }
        return utf8
    }

    /// The UTF-16 or UTF-32 encoding of `bytes`, by byte-order mark or by where the zero bytes are (JSON text
    /// starts with two ASCII characters); nil for UTF-8.
    private static func wideEncoding(of bytes: [UInt8]) -> String.Encoding? {
        if bytes.starts(with: [0x00, 0x00, 0xFE, 0xFF]) { return .utf32BigEndian }
        if bytes.starts(with: [0xFF, 0xFE, 0x00, 0x00]) { return .utf32LittleEndian }
        if bytes.starts(with: [0xFE, 0xFF]) { return .utf16BigEndian }
        if bytes.starts(with: [0xFF, 0xFE]) { return .utf16LittleEndian }
        guard bytes.count >= 4 else { return nil }
        switch (bytes[0] == 0, bytes[1] == 0, bytes[2] == 0, bytes[3] == 0) {
        case (true, true, true, false): return .utf32BigEndian
        case (false, true, true, true): return .utf32LittleEndian
        case (true, false, true, false): return .utf16BigEndian
        case (false, true, false, true): return .utf16LittleEndian
        default: return nil
        }
    }

    /// Walks one object's members, skipping their values.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func objectNames() throws(Unreadable) -> [String] {
            skipWhitespace()
            try expect(UInt8(ascii: "{"))
            var names: [String] = []
            while true {
                skipWhitespace()
                guard index < bytes.count else { throw Unreadable() }
                if bytes[index] == UInt8(ascii: "}") { return names }
                names.append(try name())
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                try skipValue()
                skipWhitespace()
                guard index < bytes.count else { throw Unreadable() }
                switch bytes[index] {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"): return names
                default: throw Unreadable()
                }
            }
        }

        /// A member name: the string token at `index`, unescaped.
        private mutating func name() throws(Unreadable) -> String {
            let start = index
            try skipString()
            let token = bytes[start..<index]
            if !token.contains(UInt8(ascii: "\\")) {
                return String(decoding: token.dropFirst().dropLast(), as: UTF8.self)
            }
            // Escapes: let Foundation's JSON parser unescape the token, exactly as it did for the dictionary.
            guard let name = try? JSONSerialization.jsonObject(with: Data(token), options: [.fragmentsAllowed]) as? String else {
                throw Unreadable()
            }
            return name
        }

        /// Moves past the string token starting at `index` (its opening quote).
        private mutating func skipString() throws(Unreadable) {
            try expect(UInt8(ascii: "\""))
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""):
                    index += 1
                    return
                default: index += 1
                }
            }
            throw Unreadable()
        }

        /// Moves past one value of any kind (nested objects and arrays included).
        private mutating func skipValue() throws(Unreadable) {
            skipWhitespace()
            var depth = 0
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    try skipString()
                    if depth == 0 { return }
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    index += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if depth == 0 { return }
                    depth -= 1
                    index += 1
                    if depth == 0 { return }
                case UInt8(ascii: ","):
                    if depth == 0 { return }
                    index += 1
                default:
                    index += 1
                }
            }
            throw Unreadable()
        }

        private mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        private mutating func expect(_ byte: UInt8) throws(Unreadable) {
            guard index < bytes.count, bytes[index] == byte else { throw Unreadable() }
            index += 1
        }
    }
}
