import Foundation

/// How the console writes values: times in UTC, prices from Apple's milliunits, text for HTML and URLs.
enum ConsoleFormat {
    /// `2026-11-24 17:48:31 UTC`.
    static func time(_ date: Date?) -> String {
        guard let date else { return "—" }
        let p = utc.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "%04d-%02d-%02d %02d:%02d:%02d UTC", p.year ?? 0, p.month ?? 0, p.day ?? 0, p.hour ?? 0, p.minute ?? 0, p.second ?? 0)
    }

    /// The Gregorian calendar in UTC.
    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// `2026-11` for a month's first instant.
    static func month(_ date: Date) -> String {
        let parts = utc.dateComponents([.year, .month], from: date)
        return String(format: "%04d-%02d", parts.year ?? 0, parts.month ?? 0)
    }

    /// Milliunits as a decimal amount with the currency: `9.99 USD`.
    static func price(_ milliunits: Int64?, _ currency: String?) -> String? {
        guard let milliunits else { return nil }
        let amount = Double(milliunits) / 1_000
        return String(format: "%.2f", amount) + (currency.map { " \($0)" } ?? "")
    }

    /// An age in seconds as `3 h 12 min`, `45 s`.
    static func age(_ seconds: Double?) -> String {
        guard let seconds else { return "none waiting" }
        let whole = Int(seconds.rounded())
        if whole < 60 { return "\(whole) s" }
        if whole < 3_600 { return "\(whole / 60) min \(whole % 60) s" }
        if whole < 86_400 { return "\(whole / 3_600) h \(whole % 3_600 / 60) min" }
        return "\(whole / 86_400) d \(whole % 86_400 / 3_600) h"
    }

    /// Escapes text for HTML content and attribute values: the templates' `{{value}}` (``ConsoleTemplates``) and markup
    /// built outside them (the SVG). Scalar by scalar: a quote followed by a combining mark is one Swift `Character`
    /// that is not `"`, yet the browser reads the quote and ends the attribute.
    static func html(_ text: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "<": escaped.append(contentsOf: "&lt;".unicodeScalars)
            case ">": escaped.append(contentsOf: "&gt;".unicodeScalars)
            case "&": escaped.append(contentsOf: "&amp;".unicodeScalars)
            case "\"": escaped.append(contentsOf: "&quot;".unicodeScalars)
            case "'": escaped.append(contentsOf: "&#39;".unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    /// Percent-encodes a path component (everything but unreserved characters).
    static func pathComponent(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// Percent-encodes a query value.
    static func queryValue(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
