import Foundation

/// Reads the times operators give on the command line: RFC 3339 with a zone (`Z` or `±hh:mm`), with or without
/// fractional seconds (`2026-11-01T00:00:00Z`, `2026-11-01T00:00:00.5+01:00`).
enum RFC3339 {
    /// The instant `text` names, or nil when it is not an RFC 3339 time.
    static func date(from text: String) -> Date? {
        let whole = ISO8601DateFormatter()
        if let date = whole.date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }
}
