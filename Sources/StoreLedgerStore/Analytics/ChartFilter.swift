package import Foundation

/// What the console's charts cover: a range of UTC calendar months and optional app (bundle id), environment and
/// product filters.
package struct ChartFilter: Sendable, Hashable {
    /// The first month (its first instant, UTC).
    package var fromMonth: Date
    /// The last month (its first instant, UTC), inclusive.
    package var toMonth: Date
    /// Only this app's bundle id.
    package var app: String?
    /// Only this environment (`Production`, `Sandbox`).
    package var environment: String?
    /// Only this product id.
    package var product: String?

    /// Creates a filter.
    package init(fromMonth: Date, toMonth: Date, app: String? = nil, environment: String? = nil, product: String? = nil) {
        self.fromMonth = fromMonth
        self.toMonth = toMonth
        self.app = app
        self.environment = environment
        self.product = product
    }
}
