public import Foundation

/// What the console's charts cover: a range of UTC calendar months and optional app (bundle id), environment and
/// product filters.
public struct ChartFilter: Sendable, Hashable {
    /// The first month (its first instant, UTC).
    public var fromMonth: Date
    /// The last month (its first instant, UTC), inclusive.
    public var toMonth: Date
    /// Only this app's bundle id.
    public var app: String?
    /// Only this environment (`Production`, `Sandbox`).
    public var environment: String?
    /// Only this product id.
    public var product: String?

    /// Creates a filter.
    public init(fromMonth: Date, toMonth: Date, app: String? = nil, environment: String? = nil, product: String? = nil) {
        self.fromMonth = fromMonth
        self.toMonth = toMonth
        self.app = app
        self.environment = environment
        self.product = product
    }
}
