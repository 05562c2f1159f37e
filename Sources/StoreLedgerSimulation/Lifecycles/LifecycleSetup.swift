package import StoreLedgerCore

/// Who and when a ``SimulatedLifecycle`` is played for: the app, the environment, the subscription's ids, the
/// clock. Product ids derive from the bundle id (`<bundle>.monthly` (`.weekly`, `.yearly` by period), `.basic`, `.premium`,
/// `.lifetime`).
package struct LifecycleSetup: Sendable {
    /// A day, in milliseconds.
    package static let day: Int64 = 86_400_000
    /// A week, in milliseconds.
    package static let week: Int64 = 7 * day
    /// A month, in milliseconds (30 days).
    package static let month: Int64 = 30 * day
    /// A year, in milliseconds (365 days).
    package static let year: Int64 = 365 * day

    /// The length in milliseconds of a subscription period (`P1W`, `P1M`, `P1Y`, …): days, weeks of 7 days, months
    /// of 30 days, years of 365 days.
    package static func milliseconds(of period: SubscriptionPeriod) -> Int64 {
        let unit: Int64 =
            switch period.unit {
            case .day: day
            case .week: week
            case .month: month
            case .year: year
            }
        return Int64(period.value) * unit
    }

    /// The subscription's original transaction id; later transactions count up from it. For a one-time purchase,
    /// the purchase's transaction id is this plus one.
    package var originalTransactionID: OriginalTransactionID
    /// The signed date of the first notification.
    package var start: Timestamp
    /// The length of a subscription period, in milliseconds.
    package var period: Int64
    /// How far the clock moves after each signed fact, in milliseconds.
    package var step: Int64
    /// `Sandbox` or `Production`.
    package var environment: AppStoreEnvironment
    /// The app's bundle id.
    package var bundleID: BundleID
    /// The app's Apple id (written into Production notifications only, as Apple does).
    package var appAppleID: Int64
    /// How many renewals the `renewals` lifecycle plays before auto-renew is turned off.
    package var renewals: Int
    /// Fresh random notification UUIDs (as Apple's) instead of deterministic ones.
    package var randomNotificationUUIDs: Bool

    /// Creates a setup; the defaults play a Sandbox subscription of monthly periods.
    package init(
        originalTransactionID: OriginalTransactionID,
        start: Timestamp,
        period: Int64 = LifecycleSetup.month,
        step: Int64 = 1_000,
        environment: AppStoreEnvironment = .sandbox,
        bundleID: BundleID,
        appAppleID: Int64,
        renewals: Int = 3,
        randomNotificationUUIDs: Bool = true
    ) {
        self.originalTransactionID = originalTransactionID
        self.start = start
        self.period = period
        self.step = step
        self.environment = environment
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.renewals = renewals
        self.randomNotificationUUIDs = randomNotificationUUIDs
    }

    /// `<bundle id>.<suffix>`.
    package func product(_ suffix: String) -> ProductID {
        ProductID("\(bundleID.rawValue).\(suffix)")
    }

    /// The product suffix of the plain subscription: `weekly`, `monthly` or `yearly` by ``period`` (`monthly` for
    /// any other length).
    package var periodProductSuffix: String {
        switch period {
        case Self.week: "weekly"
        case Self.year: "yearly"
        default: "monthly"
        }
    }

    /// A subscription builder for this setup, not bought yet.
    package func subscriptionBuilder(
        productID: ProductID? = nil,
        ownership: OwnershipType = .purchased,
        price: Int64 = 9_990
    ) -> SubscriptionLifecycleBuilder {
        var builder = SubscriptionLifecycleBuilder(
            originalTransactionID: originalTransactionID,
            productID: productID ?? product(periodProductSuffix),
            start: start,
            period: period,
            environment: environment,
            bundleID: bundleID,
            ownership: ownership,
            price: price
        )
        builder.step = step
        builder.appAppleID = appAppleID
        builder.randomNotificationUUIDs = randomNotificationUUIDs
        return builder
    }

    /// A purchase builder for this setup, with no purchases yet.
    package func purchaseBuilder() -> PurchaseLifecycleBuilder {
        var builder = PurchaseLifecycleBuilder(
            start: start,
            environment: environment,
            bundleID: bundleID,
            firstTransactionNumber: Int(originalTransactionID.rawValue) ?? 5_000
        )
        builder.step = step
        builder.appAppleID = appAppleID
        builder.randomNotificationUUIDs = randomNotificationUUIDs
        return builder
    }
}
