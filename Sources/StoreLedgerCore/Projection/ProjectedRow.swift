/// One row of the read model as the fold projects it: a subscription (``SubscriptionState``) or a one-time purchase
/// (``PurchaseState``). It names what the two share (a key, entitlement, product, token, expiry, signing time, how a
/// change is classified, how the row folds from facts) so that storing rows, locking them and announcing their changes
/// is one code path for both; what really differs (the columns, a subscription's status and fold state, the folds
/// themselves) stays in each type.
public protocol ProjectedRow: Hashable, Sendable {
    /// The row's key: an environment and the id the row is stored under.
    associatedtype Key: Hashable, Comparable, Sendable, CustomStringConvertible

    /// The kind of row as webhook event types (`subscription.renewed`) and row locks name it.
    static var kind: String { get }
    /// The row's key.
    var key: Key { get }
    /// The App Store environment the row lives in.
    var environment: AppStoreEnvironment { get }
    /// Whether the fold says the row entitles (clock-free; "now" is the database's `entitlements_at`).
    var entitled: Bool { get }
    /// The product of the current period or purchase.
    var productID: ProductID? { get }
    /// The appAccountToken the app set on the purchase.
    var appAccountToken: AppAccountToken? { get }
    /// When the current period or the non-renewing purchase ends.
    var expiresAt: Timestamp? { get }
    /// When the newest fact that shaped the row was signed.
    var lastSignedAt: Timestamp? { get }
    /// The original transaction id that names the row's purchase family (a purchase without one: its own id).
    var familyTransactionID: String { get }
    /// The transaction the row stands on now: a subscription's latest, a purchase's own.
    var currentTransactionID: TransactionID? { get }

    /// The row these facts fold into, or nil when none of them concerns `key`.
    static func fold(_ facts: some Sequence<LedgerFact>, key: Key) -> Self?
    /// What changed from `old` to `new` that a subscriber cares about, or nil.
    static func change(from old: Self?, to new: Self) -> EntitlementChange?
}

extension SubscriptionState: ProjectedRow {
    /// `subscription`.
    public static var kind: String { "subscription" }
    /// The original transaction id.
    public var familyTransactionID: String { originalTransactionID.rawValue }
    /// The latest transaction.
    public var currentTransactionID: TransactionID? { latestTransactionID }

    /// ``SubscriptionProjection/fold(_:key:)``.
    public static func fold(_ facts: some Sequence<LedgerFact>, key: SubscriptionKey) -> SubscriptionState? {
        SubscriptionProjection.fold(facts, key: key)
    }

    /// ``EntitlementChange/between(_:_:)-(SubscriptionState?,SubscriptionState?)``.
    public static func change(from old: SubscriptionState?, to new: SubscriptionState) -> EntitlementChange? {
        EntitlementChange.between(old, new)
    }
}

extension PurchaseState: ProjectedRow {
    /// `purchase`.
    public static var kind: String { "purchase" }
    /// The original transaction id, or the purchase's own transaction id when it has none.
    public var familyTransactionID: String { originalTransactionID?.rawValue ?? transactionID.rawValue }
    /// The purchase's own transaction.
    public var currentTransactionID: TransactionID? { transactionID }

    /// ``PurchaseProjection/fold(_:key:)``.
    public static func fold(_ facts: some Sequence<LedgerFact>, key: PurchaseKey) -> PurchaseState? {
        PurchaseProjection.fold(facts, key: key)
    }

    /// ``EntitlementChange/between(_:_:)-(PurchaseState?,PurchaseState?)``.
    public static func change(from old: PurchaseState?, to new: PurchaseState) -> EntitlementChange? {
        EntitlementChange.between(old, new)
    }
}
