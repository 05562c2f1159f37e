/// A verified notification together with its nested signed payloads, each decoded after its own verification.
///
/// The nested signed data is held decoded only: `payload.data.signedTransactionInfo` and `signedRenewalInfo` (the
/// JWS texts, certificates included, three quarters of a notification's size) are dropped, as in the
/// `notifications` table. The raw JWS stays in the event log, byte for byte.
public struct NotificationFact: Hashable, Sendable, Codable {
    /// The three payloads, behind one reference: a fact is copied often (into a batch, a cache, a row's fact list, an
    /// enum case), and copying three structs of a few dozen strings each retained every string; now it retains one
    /// object. Mutation copies the storage first when it is shared (copy on write), so the fact is still a value.
    private final class Storage: @unchecked Sendable {
        // Mutated only through `NotificationFact`'s `_modify` accessors, after `isKnownUniquelyReferenced`: a storage
        // seen by more than one fact (or thread) is never written to, so sharing one across threads is safe.
        var payload: NotificationPayload
        var transaction: TransactionPayload?
        var renewalInfo: RenewalInfoPayload?

        init(payload: NotificationPayload, transaction: TransactionPayload?, renewalInfo: RenewalInfoPayload?) {
            self.payload = payload
            self.transaction = transaction
            self.renewalInfo = renewalInfo
        }
    }

    private var storage: Storage

    /// The decoded notification, without the JWS texts of its nested signed data.
    public var payload: NotificationPayload {
        _read { yield storage.payload }
        _modify {
            makeStorageUnique()
            yield &storage.payload
        }
    }

    /// The decoded `data.signedTransactionInfo`, when present and verified.
    public var transaction: TransactionPayload? {
        _read { yield storage.transaction }
        _modify {
            makeStorageUnique()
            yield &storage.transaction
        }
    }

    /// The decoded `data.signedRenewalInfo`, when present and verified.
    public var renewalInfo: RenewalInfoPayload? {
        _read { yield storage.renewalInfo }
        _modify {
            makeStorageUnique()
            yield &storage.renewalInfo
        }
    }

    /// Wraps a decoded notification and its decoded nested payloads; the nested JWS texts are dropped.
    public init(
        payload: NotificationPayload,
        transaction: TransactionPayload? = nil,
        renewalInfo: RenewalInfoPayload? = nil
    ) {
        var payload = payload
        payload.data?.signedTransactionInfo = nil
        payload.data?.signedRenewalInfo = nil
        storage = Storage(payload: payload, transaction: transaction, renewalInfo: renewalInfo)
    }

    private mutating func makeStorageUnique() {
        if !isKnownUniquelyReferenced(&storage) {
            storage = Storage(payload: storage.payload, transaction: storage.transaction, renewalInfo: storage.renewalInfo)
        }
    }

    /// Equal when the three payloads are.
    public static func == (lhs: NotificationFact, rhs: NotificationFact) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.payload == rhs.payload && lhs.transaction == rhs.transaction && lhs.renewalInfo == rhs.renewalInfo)
    }

    /// Hashes the three payloads.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(payload)
        hasher.combine(transaction)
        hasher.combine(renewalInfo)
    }

    private enum CodingKeys: String, CodingKey {
        case payload, transaction, renewalInfo
    }

    /// Decodes the form ``encode(to:)`` writes (the members' names, absent payloads left out).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        storage = Storage(
            payload: try container.decode(NotificationPayload.self, forKey: .payload),
            transaction: try container.decodeIfPresent(TransactionPayload.self, forKey: .transaction),
            renewalInfo: try container.decodeIfPresent(RenewalInfoPayload.self, forKey: .renewalInfo)
        )
    }

    /// Encodes `payload`, `transaction` and `renewalInfo`, absent ones left out (as the synthesized form did).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(payload, forKey: .payload)
        try container.encodeIfPresent(transaction, forKey: .transaction)
        try container.encodeIfPresent(renewalInfo, forKey: .renewalInfo)
    }

    // The accessors below read one member of the stored payloads: through ``payload``'s coroutine, the whole
    // payload was copied (with every string's retain and release) to read one of its members.

    /// The notification's type.
    public var type: NotificationType? { storage.payload.notificationType }

    /// The notification's subtype.
    public var subtype: NotificationSubtype? { storage.payload.subtype }

    /// When Apple signed the notification.
    public var signedDate: Timestamp? { storage.payload.signedDate }

    /// Apple's id of the notification (its retries repeat it).
    public var notificationUUID: NotificationUUID? { storage.payload.notificationUUID }

    /// The app's bundle id, as the notification's data states it.
    public var bundleID: BundleID? { storage.payload.data?.bundleID }

    /// The subscription's status, as the notification's data states it (nil when absent or a code this ledger does not know).
    public var statedStatus: SubscriptionStatus? { storage.payload.data?.status.flatMap(SubscriptionStatus.init(code:)) }

    /// Whether it carries a decoded transaction.
    public var hasTransaction: Bool {
        if case .some = storage.transaction { true } else { false }
    }

    /// Whether it carries a decoded renewal info.
    public var hasRenewalInfo: Bool {
        if case .some = storage.renewalInfo { true } else { false }
    }

    /// Whether its transaction is one of an auto-renewable subscription (nil without a transaction).
    private var transactionIsAutoRenewable: Bool? {
        guard hasTransaction else { return nil }
        return TransactionPayload.isAutoRenewable(
            type: storage.transaction?.type, hasSubscriptionGroup: storage.transaction?.subscriptionGroupIdentifier != nil)
    }

    /// The subscription row it concerns: its environment and the original transaction id of its transaction or
    /// renewal info, unless its transaction is not an auto-renewable subscription's.
    public var subscriptionKey: SubscriptionKey? {
        if transactionIsAutoRenewable == false { return nil }
        guard let environment, let id = storage.transaction?.originalTransactionID ?? storage.renewalInfo?.originalTransactionID else {
            return nil
        }
        return SubscriptionKey(environment: environment, originalTransactionID: id)
    }

    /// The one-time purchase row it concerns: that of its transaction, when it is not an auto-renewable subscription's.
    public var purchaseKey: PurchaseKey? {
        guard transactionIsAutoRenewable == false, let environment, let id = storage.transaction?.transactionID else { return nil }
        return PurchaseKey(environment: environment, transactionID: id)
    }

    /// The environment: the notification data's, else the nested payloads'.
    public var environment: AppStoreEnvironment? {
        storage.payload.data?.environment ?? storage.payload.summary?.environment ?? storage.payload.appData?.environment
            ?? storage.transaction?.environment ?? storage.renewalInfo?.environment
    }
}
