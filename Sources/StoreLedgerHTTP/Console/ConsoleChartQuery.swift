import Foundation
import StoreLedgerCore
import StoreLedgerStore

/// The charts' filters as the query string gives them (`from`, `to` as `YYYY-MM`, `app`, `environment`, `product`),
/// checked: a malformed value falls back to the default and says so (an environment is matched in any case). The range
/// defaults to the last 12 months and holds at most 36; the environment defaults to Production (``defaultEnvironment``),
/// and `all` shows every environment together.
struct ConsoleChartQuery: Sendable {
    /// The most months one chart covers.
    static let maximumMonths = 36
    /// The environment shown when none is chosen. Sandbox purchases (App Review, TestFlight, developers) are not revenue
    /// (docs/analytics.md), and added to Production's they would misstate MRR, churn and refunds in the same currency.
    static let defaultEnvironment = AppStoreEnvironment.production.rawValue
    /// The `environment` value that shows every environment together.
    static let allEnvironments = "all"

    /// The filter to read with.
    var filter: ChartFilter
    /// What is wrong with the given values, if anything.
    var error: String?

    /// Parses the query values (`values` returns a parameter's value) with `now` deciding the default range.
    init(_ values: (String) -> String?, now: Date = Date()) {
        let calendar = ConsoleFormat.utc
        let thisMonth = calendar.date(from: calendar.dateComponents([.year, .month], from: now))!
        var problems: [String] = []
        func month(_ name: String, default fallback: Date) -> Date {
            guard let text = values(name)?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return fallback }
            let parts = text.split(separator: "-")
            guard parts.count == 2, parts[0].count == 4, parts[1].count == 2, let year = Int(parts[0]), let number = Int(parts[1]),
                (1970...9999).contains(year), (1...12).contains(number),
                let date = calendar.date(from: DateComponents(year: year, month: number, day: 1))
            else {
                problems.append("\(name)=\(text) is not a month like 2026-01")
                return fallback
            }
            return date
        }
        var to = month("to", default: thisMonth)
        var from = month("from", default: calendar.date(byAdding: .month, value: -11, to: to)!)
        if from > to {
            problems.append("from is after to: they were swapped")
            swap(&from, &to)
        }
        if let span = calendar.dateComponents([.month], from: from, to: to).month, span >= Self.maximumMonths {
            problems.append("at most \(Self.maximumMonths) months are shown: from was moved")
            from = calendar.date(byAdding: .month, value: -(Self.maximumMonths - 1), to: to)!
        }
        func text(_ name: String) -> String? {
            guard let value = values(name)?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
            guard value.count <= 200 else {
                problems.append("\(name) is too long")
                return nil
            }
            return value
        }
        // Stored environments are Apple's names (`Production`, `Sandbox`, …): any case finds them, anything else is said.
        var environment: String? = Self.defaultEnvironment
        if let given = text("environment") {
            if given.lowercased() == Self.allEnvironments {
                environment = nil
            } else if let known = AppStoreEnvironment(configurationValue: given)?.rawValue {
                environment = known
            } else {
                problems.append("environment=\(given) is not Production, Sandbox, Xcode, LocalTesting or all: Production is shown")
            }
        }
        filter = ChartFilter(fromMonth: from, toMonth: to, app: text("app"), environment: environment, product: text("product"))
        error = problems.isEmpty ? nil : problems.joined(separator: "; ") + "."
    }

    /// The filter as a query string (`?from=…&to=…`, then the set filters), for links to the CSV downloads.
    var queryString: String {
        var items = ["from=\(ConsoleFormat.month(filter.fromMonth))", "to=\(ConsoleFormat.month(filter.toMonth))"]
        for (name, value) in [("app", filter.app), ("environment", Optional(environmentValue)), ("product", filter.product)] {
            if let value { items.append("\(name)=\(ConsoleFormat.queryValue(value))") }
        }
        return "?" + items.joined(separator: "&")
    }

    /// The environment as the form and links write it: its name, or `all`.
    var environmentValue: String {
        filter.environment ?? Self.allEnvironments
    }
}
