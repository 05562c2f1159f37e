package import Foundation
import StoreLedgerCore
package import StoreLedgerStore

/// What a user holds at a moment, as `entitlements_at` (migration 0012, the one definition of "entitled now")
/// evaluated it: the answers behind `is_premium`, `isUnlocked`, `has_subscription` and the status routes. It adds no
/// rule of its own; it only picks which row to show.
package struct EntitlementSummary: Sendable {
    /// Every subscription and purchase of the user, evaluated at `date`.
    package let entitlements: [Entitlement]
    /// The moment asked about.
    package let date: Date

    /// Summarises `entitlements`, read at `date`.
    package init(_ entitlements: [Entitlement], at date: Date) {
        self.entitlements = entitlements
        self.date = date
    }

    /// The rows that grant `entitlement` now.
    package func active(granting entitlement: String = ProductCatalog.premium) -> [Entitlement] {
        entitlements.filter { $0.grants(entitlement) }
    }

    /// Whether the user holds a subscription or purchase granting `premium` now.
    package var isPremium: Bool { entitlements.contains { $0.grants(ProductCatalog.premium) } }

    /// The subscription to show: the one granting premium now that runs longest, else the most recent one.
    package var currentSubscription: Entitlement? {
        let subscriptions = entitlements.filter { $0.kind == .subscription }
        let premium = subscriptions.filter { $0.grants(ProductCatalog.premium) }
        return premium.max(by: Self.endsEarlier) ?? subscriptions.max(by: Self.endsEarlier)
    }

    /// The most recent subscription whose product grants premium, whether or not it grants it now (after a lapse or a
    /// refund: the one the user last had).
    package var lastPremiumSubscription: Entitlement? {
        entitlements.filter { $0.kind == .subscription && $0.entitlements.contains(ProductCatalog.premium) }.max(by: Self.endsEarlier)
    }

    /// The row granting premium now to show, subscriptions first (the longest running), then one-time purchases;
    /// nil exactly when `isPremium` is false.
    package var currentPremium: Entitlement? {
        currentSubscription.flatMap { $0.grants(ProductCatalog.premium) ? $0 : nil } ?? active().max(by: Self.endsEarlier)
    }

    private static func endsEarlier(_ lhs: Entitlement, _ rhs: Entitlement) -> Bool {
        (lhs.endsAt ?? lhs.expiresAt ?? .distantFuture, lhs.originalTransactionID)
            < (rhs.endsAt ?? rhs.expiresAt ?? .distantFuture, rhs.originalTransactionID)
    }
}
