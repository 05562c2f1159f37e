/// The winning evidence of every column of one subscription row: what `SubscriptionProjection` would need of all
/// the row's facts, kept so that a new fact merges in constant time instead of refolding the whole history.
///
/// **Invariant.** A state reached from `init(key:)` by successful merges of a set of facts `F` (in any order, with
/// any repeats) resolves to exactly `SubscriptionProjection.fold(F, key:)`. Every column is a "latest evidence
/// wins" choice, so a merge compares the new evidence with the stored winner: later wins, earlier loses, and a
/// repeat of the winner changes nothing. Where the stored winners cannot decide exactly, `merge` refuses (returns
/// `false`) and the caller refolds from all facts (`SubscriptionProjection.foldWithState`). That happens when
/// - two different pieces of evidence for one column were signed at the same instant with the same rank and say
///   different things (the full fold breaks that tie by canonical content, which the state does not keep);
/// - the current transaction must be replaced by one the state cannot rank: its newest version was upgraded away
///   or ranks below it (the runner-up is not kept), every transaction is upgraded, a candidate ties it on purchase
///   and expiry dates, or a late version of another transaction would outrank it (whether that version is its
///   transaction's newest is not kept);
/// - a late fact contests (refunds, revokes, reverses) a transaction of which a later version may exist;
/// - a transaction has no transaction id.
/// None of these happen when facts arrive in signing order with distinct signed dates, and late *older* facts
/// (an older renewal, a refund of an older period) merge without a refold: they lose every comparison they enter.
/// Duplicates merge as no-ops. Per transaction the state keeps only the current one's and those ever contested
/// (refunded, revoked, reversed): its size does not grow with renewals.
public struct SubscriptionFoldState: Hashable, Sendable, Codable {
    /// Every stored property of a state, kept behind one reference (``Storage``): a state is copied several times per
    /// batch (out of the cache, into the merge, into the rows to write, back into the cache), and copying the struct
    /// itself retained each string of its current transaction and of its winners; now a copy retains one object, and
    /// the first change to a shared state copies the fields (copy on write), so the state is still a value. Coded and
    /// compared as the fields: the same JSON and the same equality as before.
    struct Fields: Hashable, Sendable, Codable {
        /// ``SubscriptionFoldState/key``.
        var key: SubscriptionKey
        /// ``SubscriptionFoldState/current``.
        var current: TransactionPayload?
        /// ``SubscriptionFoldState/latestTransactionTime``.
        var latestTransactionTime: Double?
        /// ``SubscriptionFoldState/transactions``.
        var transactions: [String: TransactionEvidence] = [:]
        /// ``SubscriptionFoldState/activeTransaction``.
        var activeTransaction: Stamp?
        /// ``SubscriptionFoldState/renewalStatus``.
        var renewalStatus: Winner<RenewalStatus>?
        /// ``SubscriptionFoldState/notificationStatus``.
        var notificationStatus: Winner<SubscriptionStatus>?
        /// ``SubscriptionFoldState/autoRenew``.
        var autoRenew: Winner<Bool?>?
        /// ``SubscriptionFoldState/autoRenewProductID``.
        var autoRenewProductID: Winner<ProductID?>?
        /// ``SubscriptionFoldState/expirationIntent``.
        var expirationIntent: Winner<ExpirationIntent?>?
        /// ``SubscriptionFoldState/gracePeriodExpiresAt``.
        var gracePeriodExpiresAt: Winner<Timestamp?>?
        /// ``SubscriptionFoldState/priceIncreaseStatus``.
        var priceIncreaseStatus: Winner<PriceIncreaseStatus?>?
        /// ``SubscriptionFoldState/latestRenewalInfo``.
        var latestRenewalInfo: Winner<RenewalInfoColumns>?
        /// ``SubscriptionFoldState/notificationBundleID``.
        var notificationBundleID: Winner<BundleID>?
        /// ``SubscriptionFoldState/latestPurchasedAppAccountToken``.
        var latestPurchasedAppAccountToken: Winner<AppAccountToken>?
        /// ``SubscriptionFoldState/rulesRevision``: required in a stored state, so that one stored before revisions
        /// existed fails to decode (and its row is refolded).
        var rulesRevision: Int = SubscriptionFoldState.currentRulesRevision
        /// ``SubscriptionFoldState/hasNotifications``.
        var hasNotifications = false
        /// ``SubscriptionFoldState/lastSignedAt``.
        var lastSignedAt: Timestamp?
    }

    /// The fields, shared by copies until one of them changes.
    private final class Storage: @unchecked Sendable {
        // Changed only through `SubscriptionFoldState`'s `_modify` accessors, after `isKnownUniquelyReferenced`: a
        // storage seen by more than one state (or thread) is never written to, so sharing one across threads is safe.
        var fields: Fields

        init(_ fields: Fields) { self.fields = fields }
    }

    private var storage: Storage

    /// The row's key.
    public var key: SubscriptionKey {
        _read { yield storage.fields.key }
        _modify {
            makeStorageUnique()
            yield &storage.fields.key
        }
    }
    /// The newest version of the current period's transaction.
    var current: TransactionPayload? {
        _read { yield storage.fields.current }
        _modify {
            makeStorageUnique()
            yield &storage.fields.current
        }
    }
    /// The latest signed date of any transaction version (nil: none, or only undated ones).
    var latestTransactionTime: Double? {
        _read { yield storage.fields.latestTransactionTime }
        _modify {
            makeStorageUnique()
            yield &storage.fields.latestTransactionTime
        }
    }
    /// Revocation evidence per transaction id: the current transaction's, and every contested one's.
    var transactions: [String: TransactionEvidence] {
        _read { yield storage.fields.transactions }
        _modify {
            makeStorageUnique()
            yield &storage.fields.transactions
        }
    }
    /// The latest "active" evidence of a transaction version (not revoked nor upgraded, period not over when signed), at
    /// its purchase (``SubscriptionProjection/activeSince(_:signed:)``).
    var activeTransaction: Stamp? {
        _read { yield storage.fields.activeTransaction }
        _modify {
            makeStorageUnique()
            yield &storage.fields.activeTransaction
        }
    }
    /// The latest renewal info that states a status (billing retry, grace period, expired), and that status.
    var renewalStatus: Winner<RenewalStatus>? {
        _read { yield storage.fields.renewalStatus }
        _modify {
            makeStorageUnique()
            yield &storage.fields.renewalStatus
        }
    }
    /// The latest notification whose status does not depend on the current transaction (Apple's `data.status`, or
    /// the status its type implies, refunds and reversals aside).
    var notificationStatus: Winner<SubscriptionStatus>? {
        _read { yield storage.fields.notificationStatus }
        _modify {
            makeStorageUnique()
            yield &storage.fields.notificationStatus
        }
    }
    /// Whether the subscription renews.
    var autoRenew: Winner<Bool?>? {
        _read { yield storage.fields.autoRenew }
        _modify {
            makeStorageUnique()
            yield &storage.fields.autoRenew
        }
    }
    /// The product that renews next.
    var autoRenewProductID: Winner<ProductID?>? {
        _read { yield storage.fields.autoRenewProductID }
        _modify {
            makeStorageUnique()
            yield &storage.fields.autoRenewProductID
        }
    }
    /// Why it expired.
    var expirationIntent: Winner<ExpirationIntent?>? {
        _read { yield storage.fields.expirationIntent }
        _modify {
            makeStorageUnique()
            yield &storage.fields.expirationIntent
        }
    }
    /// When the grace period ends.
    var gracePeriodExpiresAt: Winner<Timestamp?>? {
        _read { yield storage.fields.gracePeriodExpiresAt }
        _modify {
            makeStorageUnique()
            yield &storage.fields.gracePeriodExpiresAt
        }
    }
    /// Price-increase consent.
    var priceIncreaseStatus: Winner<PriceIncreaseStatus?>? {
        _read { yield storage.fields.priceIncreaseStatus }
        _modify {
            makeStorageUnique()
            yield &storage.fields.priceIncreaseStatus
        }
    }
    /// What the latest renewal info supplies to other columns.
    var latestRenewalInfo: Winner<RenewalInfoColumns>? {
        _read { yield storage.fields.latestRenewalInfo }
        _modify {
            makeStorageUnique()
            yield &storage.fields.latestRenewalInfo
        }
    }
    /// The bundle id of the latest notification that names one (by fact order: signed date, then UUID).
    var notificationBundleID: Winner<BundleID>? {
        _read { yield storage.fields.notificationBundleID }
        _modify {
            makeStorageUnique()
            yield &storage.fields.notificationBundleID
        }
    }
    /// The app account token of the latest-purchased transaction version that carries one (``Stamp/init(purchased:)``).
    var latestPurchasedAppAccountToken: Winner<AppAccountToken>? {
        _read { yield storage.fields.latestPurchasedAppAccountToken }
        _modify {
            makeStorageUnique()
            yield &storage.fields.latestPurchasedAppAccountToken
        }
    }
    /// The revision of the fold's rules the state was merged under. A stored state of another revision is not merged
    /// into: ``decode(storedJSON:)`` refuses it, and its row is refolded from all facts.
    public internal(set) var rulesRevision: Int {
        _read { yield storage.fields.rulesRevision }
        _modify {
            makeStorageUnique()
            yield &storage.fields.rulesRevision
        }
    }
    /// The revision of the rules this build folds by. Raise it when a winner's meaning changes: 2 = the token fallback
    /// by purchase date (``latestPurchasedAppAccountToken``; before, by signed date, under another name); 3 = a
    /// transaction's "active" evidence from its purchase (``activeTransaction``; before, from its signed date).
    public static let currentRulesRevision = 3
    /// Whether any notification was merged.
    var hasNotifications: Bool {
        _read { yield storage.fields.hasNotifications }
        _modify {
            makeStorageUnique()
            yield &storage.fields.hasNotifications
        }
    }
    /// The latest signed date of any fact or nested payload.
    var lastSignedAt: Timestamp? {
        _read { yield storage.fields.lastSignedAt }
        _modify {
            makeStorageUnique()
            yield &storage.fields.lastSignedAt
        }
    }

    /// The state of a subscription with no facts yet.
    public init(key: SubscriptionKey) {
        storage = Storage(Fields(key: key))
    }

    /// Decodes the fields (the format ``Fields`` codes).
    public init(from decoder: any Decoder) throws {
        storage = Storage(try Fields(from: decoder))
    }

    /// Encodes the fields.
    public func encode(to encoder: any Encoder) throws {
        try storage.fields.encode(to: encoder)
    }

    /// Equal when the fields are.
    public static func == (lhs: SubscriptionFoldState, rhs: SubscriptionFoldState) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.fields == rhs.storage.fields
    }

    /// Hashes the fields.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.fields)
    }

    private mutating func makeStorageUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
    }

    /// When a piece of evidence was signed (nil: undated, before every date), its rank at equal instants, and for
    /// notifications' fact order the UUID. Canonical content, the full fold's last tie-break, is not kept.
    struct Stamp: Hashable, Sendable, Codable, Comparable {
        /// Signed epoch milliseconds, nil when undated.
        var time: Double?
        /// The rank at equal instants (`EvidenceOrder.Rank`).
        var rank: Int
        /// A further tie-break where the full fold has one before canonical content (a notification's UUID).
        var id: String?

        /// A stamp for evidence signed at `time` with `rank`.
        init(_ time: Timestamp?, _ rank: EvidenceOrder.Rank, id: String? = nil) {
            self.time = time?.millisecondsSince1970
            self.rank = rank.rawValue
            self.id = id
        }

        /// A transaction version's stamp by purchase: its purchase date in the instant's place and its signed date
        /// (whole epoch milliseconds) in the rank's, so a later purchase wins, then a later version of it. Undated
        /// (Apple signs everything) is -1, below every date since 1970 and within what the stored text's plain reader
        /// reads; versions a millisecond's fraction apart tie, and a tie with another token refuses the merge.
        init(purchased version: TransactionPayload) {
            self.time = version.purchaseDate?.millisecondsSince1970
            self.rank = version.signedDate.map { Int($0.millisecondsSince1970.rounded(.down)) } ?? -1
        }

        /// A stamp at a raw instant and rank.
        init(time: Double?, rank: EvidenceOrder.Rank) {
            self.time = time
            self.rank = rank.rawValue
        }

        /// Orders by instant (undated first), rank, then id.
        static func < (lhs: Stamp, rhs: Stamp) -> Bool {
            if lhs.time != rhs.time {
                guard let l = lhs.time else { return true }
                guard let r = rhs.time else { return false }
                return l < r
            }
            if lhs.rank != rhs.rank { return lhs.rank < rhs.rank }
            return (lhs.id ?? "") < (rhs.id ?? "")
        }
    }

    /// The value offered by the latest evidence so far.
    struct Winner<Value: Hashable & Sendable & Codable>: Hashable, Sendable, Codable {
        /// The winning evidence's stamp.
        var stamp: Stamp
        /// Its value.
        var value: Value
    }

    /// A renewal info's word on status, and when it was signed (it counts only if signed after the current
    /// period ended).
    struct RenewalStatus: Hashable, Sendable, Codable {
        /// Grace period, billing retry or expired.
        var status: SubscriptionStatus
        /// When the renewal info was signed.
        var signedAt: Timestamp
    }

    /// The columns the latest renewal info supplies when the transactions do not.
    struct RenewalInfoColumns: Hashable, Sendable, Codable {
        /// The product, when there is no transaction.
        var productID: ProductID?
        /// The app account token, when no transaction carries one.
        var appAccountToken: AppAccountToken?
    }

    /// A revocation's details (`TransactionRevocation.Details`, storable).
    struct Revocation: Hashable, Sendable, Codable {
        /// When access was revoked.
        var revokedAt: Timestamp?
        /// Why it was refunded.
        var reason: RevocationReason?
        /// How it was revoked.
        var type: RevocationType?
    }

    /// What a REFUND / REVOKE or a REFUND_REVERSED without `data.status` says about the status.
    enum RefundWord: String, Hashable, Sendable, Codable {
        /// Revoked.
        case revoked
        /// As if never revoked, at the notification's signed date.
        case reversed
    }

    /// The revocation evidence of one transaction (`TransactionRevocation.resolve` kept incrementally).
    struct TransactionEvidence: Hashable, Sendable, Codable {
        /// The latest word among its versions and the refund notifications about it.
        var revocation: Winner<Revocation?>?
        /// Whether any evidence spoke of a revocation or reversal.
        var contested: Bool
        /// The latest REFUND / REVOKE / REFUND_REVERSED about it that carries no `data.status`.
        var refundWord: Winner<RefundWord>?
    }
}

extension SubscriptionFoldState {
    /// Offers a value to a column: later evidence replaces the winner, earlier loses, and equal stamps must agree
    /// (the full fold would break that tie by content, which is not kept). Returns false when they do not.
    static func offer<Value>(_ value: Value, at stamp: Stamp, to winner: inout Winner<Value>?) -> Bool {
        guard let current = winner else {
            winner = Winner(stamp: stamp, value: value)
            return true
        }
        if current.stamp < stamp {
            winner = Winner(stamp: stamp, value: value)
            return true
        }
        if stamp < current.stamp { return true }
        return current.value == value
    }
}
