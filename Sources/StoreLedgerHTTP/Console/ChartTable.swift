import Foundation

/// One chart's numbers: the rows its table and CSV show, and the points its SVG draws (one mark per point).
package struct ChartTable: Sendable, Equatable {
    /// One drawn value.
    struct Point: Sendable, Equatable {
        /// The x label (a month, `2026-11`).
        var label: String
        /// The series (`paid`, `USD`, …).
        var series: String
        /// The value.
        var value: Double
    }

    /// Column headers.
    var columns: [String]
    /// Rows, as text, in the columns' order.
    var rows: [[String]]
    /// What the SVG draws.
    var points: [Point]
    /// How the drawn value reads (`%`, currency units, count).
    var unit: String

    /// The table as CSV (RFC 4180: CRLF line ends, fields with a comma, quote or line break quoted; a text field
    /// starting with `=`, `+`, `-`, `@`, a tab or a carriage return is prefixed with `'` so spreadsheets do not run
    /// it as a formula: ``csvField(_:)``).
    var csv: String {
        ([columns] + rows).map { $0.map(Self.csvField).joined(separator: ",") }.joined(separator: "\r\n") + "\r\n"
    }

    /// One field, judged scalar by scalar (a quote or `=` followed by a combining mark is one `Character`, still a
    /// quote or a formula to a spreadsheet). A text field starting with `=`, `+`, `-`, `@`, a tab or a carriage return
    /// (OWASP's list) gets a leading `'`.
    package static func csvField(_ field: String) -> String {
        var value = field
        if let first = value.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first), Double(value) == nil { value = "'" + value }
        guard value.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return value }
        var quoted = String.UnicodeScalarView()
        quoted.append("\"")
        for scalar in value.unicodeScalars {
            quoted.append(scalar)
            if scalar == "\"" { quoted.append("\"") }
        }
        quoted.append("\"")
        return String(quoted)
    }
}
