import Foundation
import Hummingbird

/// An `application/x-www-form-urlencoded` body as the console's forms send it: the first value of each field.
struct ConsoleForm: Sendable {
    /// Fields by name.
    var fields: [String: String]

    /// Parses `body`; a name or value with a malformed percent escape (`100%`, typed into a URL by hand) is taken as
    /// written, `+` read as a space.
    init(_ body: String) {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]) else { continue }
            let value = parts.count > 1 ? Self.decode(parts[1]) : ""
            if fields[name] == nil, let value { fields[name] = value }
        }
        self.fields = fields
    }

    /// The request's query string read the way a browser writes a GET form's fields (`+` for a space, which
    /// Hummingbird's `queryParameters` leaves as a `+`).
    init(queryOf request: Request) {
        self.init(request.uri.query ?? "")
    }

    /// The field's value, nil when absent.
    subscript(_ name: String) -> String? { fields[name] }

    private static func decode(_ text: Substring) -> String? {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}
