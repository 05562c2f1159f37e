import Foundation

/// A strict reader of JSON in the plain shape the App Store signs: ASCII, no backslash escapes, integers without
/// fraction or exponent where the models want integers. It reads Apple's payloads into the models without
/// Foundation's `Codable` machinery (which was a tenth of a worker's CPU, BENCHMARKS.md 2026-11-25), and gives up,
/// by throwing ``Fallback``, on anything else — any other byte, an escape, a value of another type than the model
/// reads, a key twice, invalid JSON — so that the caller decodes with `JSONDecoder` instead and gets exactly its
/// value or its error. It never decides anything `JSONDecoder` would decide differently: where it succeeds, the
/// value is the one `JSONDecoder` gives (checked by `PlainPayloadDecodingTests`).
struct PlainJSONReader {
    /// Not the plain shape: decode with `JSONDecoder`.
    struct Fallback: Error {}

    /// The bytes being read.
    let bytes: UnsafeBufferPointer<UInt8>
    /// The next byte to read.
    var index = 0

    /// Reads `data` with `body`, or throws ``Fallback`` when it is not plain JSON of that shape. Outside strings the
    /// grammar admits only ASCII; inside, ``stringBytes()`` gives up on any escape, control or non-ASCII byte, so every
    /// string's bytes are its text, as `JSONDecoder` reads it (and no byte order mark or other encoding gets through).
    static func read<T>(_ data: Data, _ body: (inout PlainJSONReader) throws(Fallback) -> T) throws(Fallback) -> T {
        let result: Result<T, Fallback> = data.withUnsafeBytes { raw in
            var reader = PlainJSONReader(bytes: raw.bindMemory(to: UInt8.self))
            do throws(Fallback) {
                reader.skipWhitespace()
                let value = try body(&reader)
                reader.skipWhitespace()
                guard reader.index == reader.bytes.count else { throw Fallback() }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Skips JSON whitespace.
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// The next byte (after whitespace), not consumed.
    mutating func peek() throws(Fallback) -> UInt8 {
        skipWhitespace()
        guard index < bytes.count else { throw Fallback() }
        return bytes[index]
    }

    /// Consumes `byte` (after whitespace).
    mutating func expect(_ byte: UInt8) throws(Fallback) {
        guard try peek() == byte else { throw Fallback() }
        index += 1
    }

    /// Reads an object, calling `member` with each key's bytes (the reader at the key's value, which `member` must
    /// read or skip). Returns the range of the object's text.
    @discardableResult
    mutating func readObject(_ member: (inout PlainJSONReader, UnsafeBufferPointer<UInt8>) throws(Fallback) -> Void) throws(Fallback) -> Range<Int> {
        try expect(UInt8(ascii: "{"))
        let start = index - 1
        if try peek() == UInt8(ascii: "}") {
            index += 1
            return start..<index
        }
        while true {
            let key = try stringBytes()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            try member(&self, key)
            switch try peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return start..<index
            default: throw Fallback()
            }
        }
    }

    /// The bytes of a string (the reader at its opening quote, after whitespace): printable ASCII without escapes,
    /// else ``Fallback``. Eight bytes at a time while none of them is a quote, a backslash, a control or a non-ASCII
    /// byte (a nested JWS is kilobytes long).
    mutating func stringBytes() throws(Fallback) -> UnsafeBufferPointer<UInt8> {
        try expect(UInt8(ascii: "\""))
        let start = index
        index = Self.endOfPlainStringBytes(bytes, from: start)
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Fallback() }
        index += 1
        return UnsafeBufferPointer(rebasing: bytes[start..<(index - 1)])
    }

    /// The index of the first byte from `start` on that cannot be part of a plain string's text — a quote, a
    /// backslash, a control or a non-ASCII byte — or `bytes.count`. Thirty-two bytes a step while none of them is one
    /// (a nested JWS is kilobytes long, a notification body about 13 kB), then eight; between quotes, the bytes before
    /// it are the string's text exactly as `JSONDecoder` and `JSONSerialization` read it. Shared by this reader and
    /// ``NotificationEnvelope``. (Swift's `SIMD16` comparisons were tried for the envelope: this toolchain does not
    /// vectorize them, 170 times slower.)
    static func endOfPlainStringBytes(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            // In a word of ASCII bytes none of which stops the scan, `(word ^ quotes) - ones`, `(word ^ backslashes) -
            // ones` and `word - spaces` borrow nowhere, so no byte of theirs (nor of the word) has its high bit set.
            // At the word's lowest stopping byte nothing borrows into it, and that byte's high bit is set: in the word
            // (non-ASCII), in the first two (0 - 1: a quote or a backslash) or in the third (below 0x20). So a word
            // has a stopping byte iff the result is not zero (the byte loop below then finds it).
            func stops(_ word: UInt64) -> UInt64 {
                (((word ^ (ones &* 0x22)) &- ones) | ((word ^ (ones &* 0x5C)) &- ones) | (word &- (ones &* 0x20)) | word) & highs
            }
            func word(_ offset: Int) -> UInt64 { raw.loadUnaligned(fromByteOffset: index + offset, as: UInt64.self) }
            while bytes.count - index >= 32, stops(word(0)) | stops(word(8)) | stops(word(16)) | stops(word(24)) == 0 {
                index += 32
            }
            while bytes.count - index >= 8, stops(word(0)) == 0 {
                index += 8
            }
        }
        while index < bytes.count {
            let byte = bytes[index]
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") else { break }
            index += 1
        }
        return index
    }

    /// Consumes `null` if it comes next.
    mutating func readNull() throws(Fallback) -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    /// A string, or nil for `null`.
    mutating func string() throws(Fallback) -> String? {
        if try readNull() { return nil }
        return String(decoding: try stringBytes(), as: UTF8.self)
    }

    /// An integer literal (no fraction, no exponent, no `-0`), or nil for `null`.
    mutating func int64() throws(Fallback) -> Int64? {
        if try readNull() { return nil }
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        let start = index
        var value: Int64 = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            let digit = Int64(bytes[index] - UInt8(ascii: "0"))
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = shifted.addingReportingOverflow(digit)
            guard !overflow1, !overflow2 else { throw Fallback() }
            value = next
            index += 1
        }
        let digits = index - start
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { throw Fallback() }
        guard !(negative && value == 0) else { throw Fallback() }
        if index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): throw Fallback()
            default: break
            }
        }
        return negative ? -value : value
    }

    /// An integer in `Int32`'s range, or nil for `null`.
    mutating func int32() throws(Fallback) -> Int32? {
        guard let value = try int64() else { return nil }
        guard let narrow = Int32(exactly: value) else { throw Fallback() }
        return narrow
    }

    /// A timestamp written as whole milliseconds (exact as a `Double`), or nil for `null`.
    mutating func timestamp() throws(Fallback) -> Timestamp? {
        guard let value = try int64() else { return nil }
        guard value.magnitude < (1 << 53) else { throw Fallback() }
        return Timestamp(millisecondsSince1970: Double(value))
    }

    /// `true` or `false`, or nil for `null`.
    mutating func bool() throws(Fallback) -> Bool? {
        switch try peek() {
        case UInt8(ascii: "t"):
            try literal("true")
            return true
        case UInt8(ascii: "f"):
            try literal("false")
            return false
        case UInt8(ascii: "n"):
            try literal("null")
            return nil
        default: throw Fallback()
        }
    }

    /// An array of strings, or nil for `null`.
    mutating func strings() throws(Fallback) -> [String]? {
        if try readNull() { return nil }
        try expect(UInt8(ascii: "["))
        var values: [String] = []
        if try peek() == UInt8(ascii: "]") {
            index += 1
            return values
        }
        while true {
            values.append(String(decoding: try stringBytes(), as: UTF8.self))
            switch try peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return values
            default: throw Fallback()
            }
        }
    }

    /// Skips any JSON value (validating it), nesting at most 32 deep.
    mutating func skipValue(depth: Int = 0) throws(Fallback) {
        guard depth < 32 else { throw Fallback() }
        switch try peek() {
        case UInt8(ascii: "\""): _ = try stringBytes()
        case UInt8(ascii: "{"): try readObject { reader, _ throws(Fallback) in try reader.skipValue(depth: depth + 1) }
        case UInt8(ascii: "["):
            index += 1
            if try peek() == UInt8(ascii: "]") {
                index += 1
                return
            }
            while true {
                try skipValue(depth: depth + 1)
                switch try peek() {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"):
                    index += 1
                    return
                default: throw Fallback()
                }
            }
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: try skipNumber()
        }
    }

    /// Skips a number in JSON's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private mutating func skipNumber() throws(Fallback) {
        func isDigit(_ index: Int) -> Bool { index < bytes.count && bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9") }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard isDigit(index) else { throw Fallback() }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while isDigit(index) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard isDigit(index) else { throw Fallback() }
            while isDigit(index) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard isDigit(index) else { throw Fallback() }
            while isDigit(index) { index += 1 }
        }
    }

    /// Consumes exactly `text`.
    private mutating func literal(_ text: StaticString) throws(Fallback) {
        let count = text.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw Fallback() }
        for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { throw Fallback() }
        index += count
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// Whether these bytes are exactly `text`.
    func `is`(_ text: StaticString) -> Bool {
        guard count == text.utf8CodeUnitCount else { return false }
        for offset in 0..<count where self[offset] != text.utf8Start[offset] { return false }
        return true
    }
}

/// The keys of one object already read, to give up on a key seen twice (which `JSONDecoder` resolves its own way).
struct SeenKeys {
    /// One bit per key number.
    private var bits: UInt64 = 0

    /// Marks key `number` as read; throws when it was read before.
    mutating func insert(_ number: Int) throws(PlainJSONReader.Fallback) {
        let bit: UInt64 = 1 << UInt64(number)
        guard bits & bit == 0 else { throw PlainJSONReader.Fallback() }
        bits |= bit
    }

    /// Whether key `number` was read.
    func contains(_ number: Int) -> Bool { bits & (1 << UInt64(number)) != 0 }
}
