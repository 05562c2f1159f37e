public import Foundation

/// Escapes in JSON text that matter beyond JSON itself.
public enum JSONEscapes {
    /// Whether the JSON text `json` holds the escape `\u0000` (a NUL character in a string). JSON allows it and
    /// Foundation decodes it, but PostgreSQL stores no NUL in `jsonb` or `text`, so a payload holding one cannot be
    /// recorded as facts (its raw bytes can: the event log's `bytea`). An escaped backslash followed by `u0000`
    /// (`\\u0000`, the text "\u0000") is not one. Outside strings valid JSON has no backslash, so no string state
    /// is tracked.
    public static func containsNUL(_ json: Data) -> Bool {
        json.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return false }
            let count = raw.count
            var index = 0
            while index < count {
                // memchr: payloads are kilobytes and rarely hold a backslash at all.
                guard let found = memchr(base + index, 0x5C, count - index) else { return false }
                let at = base.distance(to: UnsafeRawPointer(found))
                guard at + 1 < count else { return false }
                let next = raw[at + 1]
                if next == UInt8(ascii: "u"), at + 5 < count,
                    raw[at + 2] == 0x30, raw[at + 3] == 0x30, raw[at + 4] == 0x30, raw[at + 5] == 0x30
                {
                    return true
                }
                // Past the escape's second byte: `\\` is one escape, so its second backslash starts nothing.
                index = at + 2
            }
            return false
        }
    }
}
