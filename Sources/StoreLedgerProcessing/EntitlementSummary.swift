public import Foundation
public import StoreLedgerCore
public import StoreLedgerStore

/// What a user holds at a moment, read through the product catalog: the answers behind `is_premium`,
/// `isUnlocked` and the status routes.
public struct EntitlementSummary: Sendable {
    /// Every subscription and purchase of the user.
    public let entitlements: [Entitlement]
    /// The catalog that says which products grant what.
    public let catalog: ProductCatalog
    /// The moment asked about.
    public let date: Date

    /// Summarises `entitlements` at `date`.
    public init(_ entitlements: [Entitlement], catalog: ProductCatalog, at date: Date) {
        self.entitlements = entitlements
        self.catalog = catalog
        self.date = date
    }

    /// The rows that grant `entitlement` now.
    public func active(granting entitlement: String = ProductCatalog.premium) -> [Entitlement] {
        entitlements.filter { $0.isActive(at: date) && catalog.grants(entitlement, productID: $0.productID.map(ProductID.init)) }
    }

    /// Whether the user holds an entitled subscription or purchase granting `premium`.
    public var isPremium: Bool { !active().isEmpty }

    /// The subscription to show: the active one granting premium that runs longest, else the most recent one.
    public var currentSubscription: Entitlement? {
        let subscriptions = entitlements.filter { $0.kind == .subscription }
        let active = subscriptions.filter { $0.isActive(at: date) && catalog.grants(ProductCatalog.premium, productID: $0.productID.map(ProductID.init)) }
        return active.max(by: Self.endsEarlier) ?? subscriptions.max(by: Self.endsEarlier)
    }

    /// The premium-granting row to show for one-time purchases or subscriptions alike (subscriptions first).
    public var currentPremium: Entitlement? {
        currentSubscription.flatMap { $0.isActive(at: date) ? $0 : nil } ?? active().first
    }

    private static func endsEarlier(_ lhs: Entitlement, _ rhs: Entitlement) -> Bool {
        (lhs.expiresAt ?? .distantFuture, lhs.originalTransactionID) < (rhs.expiresAt ?? .distantFuture, rhs.originalTransactionID)
    }
}
