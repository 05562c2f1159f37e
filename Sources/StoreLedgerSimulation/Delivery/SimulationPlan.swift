package import StoreLedgerCore

/// What `storeledger simulate` sends, decided before anything is sent: which lifecycles for how many
/// subscriptions, dated so each ends at ``now``, merged in signing order (or shuffled), with some notifications
/// resent as Apple retries. Every random choice comes from ``seed``, except notification UUIDs, which are fresh.
package struct SimulationPlan: Sendable {
    /// Which lifecycles to play.
    package enum Selection: Hashable, Sendable {
        /// The same lifecycle for every subscription.
        case lifecycle(SimulatedLifecycle)
        /// A lifecycle drawn at random for each subscription.
        case random
    }

    /// The most subscriptions a plan plays.
    package static let maximumSubscriptions = 10_000
    /// The most deliveries a plan holds.
    package static let maximumDeliveries = 100_000
    /// The most renewals the `renewals` lifecycle plays (twenty years of weekly renewals); the timeline must also
    /// fit in ``maximumHistory``.
    package static let maximumRenewals = 1_040
    /// The longest timeline a plan signs, in milliseconds: from its first signed date to ``now`` (20 years of
    /// 365.25 days). The development CA is minted to cover this much history (see
    /// ``DevelopmentCertificateAuthority/requiredValidity(at:)``).
    package static let maximumHistory: Int64 = 20 * 36_525 * 864_000
    /// How much earlier than ``now`` a lifecycle may end (each ends up to a minute before, at random).
    static let endJitter: Int64 = 60_000

    /// Which lifecycles to play.
    package var selection: Selection
    /// How many subscriptions (or one-time purchases) to play; `nil`: one for a fixed lifecycle, and for
    /// `random` as many as ``deliveryLimit`` needs.
    package var subscriptions: Int?
    /// Stop after this many deliveries (duplicates included); required for `random` without `subscriptions`.
    package var deliveryLimit: Int?
    /// Deliver in a random order instead of signing order.
    package var shuffle: Bool
    /// The probability (0…1) that a notification is sent a second time, later, unchanged.
    package var duplicateRate: Double
    /// The seed of every random choice.
    package var seed: UInt64
    /// The app, environment and period every lifecycle is played with (ids and start are set per subscription).
    package var setup: LifecycleSetup
    /// The instant the lifecycles end at (each is ended up to a minute earlier, at random).
    package var now: Timestamp

    /// Creates a plan.
    package init(
        selection: Selection,
        subscriptions: Int? = nil,
        deliveryLimit: Int? = nil,
        shuffle: Bool = false,
        duplicateRate: Double = 0,
        seed: UInt64,
        environment: AppStoreEnvironment = .sandbox,
        bundleID: BundleID,
        appAppleID: Int64,
        period: Int64 = LifecycleSetup.month,
        renewals: Int = 3,
        now: Timestamp
    ) {
        self.selection = selection
        self.subscriptions = subscriptions
        self.deliveryLimit = deliveryLimit
        self.shuffle = shuffle
        self.duplicateRate = duplicateRate
        self.seed = seed
        self.setup = LifecycleSetup(
            originalTransactionID: "0", start: now, period: period, environment: environment,
            bundleID: bundleID, appAppleID: appAppleID, renewals: renewals)
        self.now = now.wholeMilliseconds
    }

    /// Checks the bounds: 1…``maximumSubscriptions`` subscriptions, 1…``maximumDeliveries`` deliveries, a
    /// duplicate rate in 0…1, and a bound on a random plan.
    package func validate() throws(SimulationError) {
        if let subscriptions, !(1...Self.maximumSubscriptions).contains(subscriptions) {
            throw SimulationError(.invalidOptions, "subscriptions must be in 1...\(Self.maximumSubscriptions)")
        }
        if let deliveryLimit, !(1...Self.maximumDeliveries).contains(deliveryLimit) {
            throw SimulationError(.invalidOptions, "the number of deliveries must be in 1...\(Self.maximumDeliveries)")
        }
        guard (0...Self.maximumRenewals).contains(setup.renewals) else {
            throw SimulationError(.invalidOptions, "renewals must be in 0...\(Self.maximumRenewals)")
        }
        guard (0...1).contains(duplicateRate) else {
            throw SimulationError(.invalidOptions, "the duplicate rate must be in 0...1")
        }
        if selection == .random, subscriptions == nil, deliveryLimit == nil {
            throw SimulationError(.invalidOptions, "a random plan needs a number of subscriptions or deliveries")
        }
        guard setup.period > 0 else {
            throw SimulationError(.invalidOptions, "the subscription period must be positive")
        }
        let span = timelineSpan()
        guard span + Self.endJitter <= Self.maximumHistory else {
            let years = (Double(span) / (365.25 * 86_400_000) * 10).rounded() / 10
            throw SimulationError(
                .invalidOptions,
                "this plan's lifecycles span \(years) years (\(setup.renewals) renewals of "
                    + "\(setup.period / 86_400_000) days); the simulator signs at most 20 years of history")
        }
    }

    /// The lifecycles this plan may play: the selected one, or every one for `random`.
    var candidateLifecycles: [SimulatedLifecycle] {
        switch selection {
        case .lifecycle(let lifecycle): [lifecycle]
        case .random: SimulatedLifecycle.allCases
        }
    }

    /// The longest span, in milliseconds, from the first to the last signed date of one of the plan's lifecycles.
    func timelineSpan() -> Int64 {
        candidateLifecycles.map { SimulatedLifecycle.span(of: $0.facts(setup)) }.max() ?? 0
    }

    /// Every signed date the plan can produce lies in this range: from its longest lifecycle ending a minute
    /// before ``now`` to ``now``. Check the signing CA covers it (``DevelopmentCertificateAuthority/requireCovers(_:)``)
    /// before signing.
    package func signedDateRange() throws(SimulationError) -> ClosedRange<Timestamp> {
        try validate()
        let end = now.wholeMilliseconds
        return end.adding(milliseconds: -(timelineSpan() + Self.endJitter - 1))...end
    }

    /// Plays the lifecycles, signs their notifications and orders the deliveries.
    package func deliveries(signer: NotificationSigner) throws(SimulationError) -> [PlannedDelivery] {
        try validate()
        var rng = SplitMix64(seed: seed)
        let now = self.now.wholeMilliseconds
        let limit = min(deliveryLimit ?? Self.maximumDeliveries, Self.maximumDeliveries)
        let count = subscriptions ?? (selection == .random ? Self.maximumSubscriptions : 1)

        // Play each subscription, ended up to a minute before `now`, until enough notifications exist.
        var streams: [[SimulatedNotification]] = []
        var total = 0
        for _ in 0..<count where total < limit {
            let lifecycle: SimulatedLifecycle =
                switch selection {
                case .lifecycle(let lifecycle): lifecycle
                case .random: SimulatedLifecycle.allCases.randomElement(using: &rng)!
                }
            var setup = self.setup
            setup.originalTransactionID = Self.originalTransactionID(using: &rng)
            let end = now.adding(milliseconds: -Int64.random(in: 0..<Self.endJitter, using: &rng))
            let notifications = try signer.signNotifications(in: lifecycle.facts(setup, endingAt: end))
            streams.append(notifications)
            total += notifications.count
        }

        // Order: by signed date across subscriptions (each stream is already in signing order), or shuffled.
        var ordered = streams.flatMap { $0 }.enumerated().map { ($0.offset, $0.element) }
        ordered.sort { lhs, rhs in
            let left = lhs.1.signedDate ?? 0
            let right = rhs.1.signedDate ?? 0
            return left != right ? left < right : lhs.0 < rhs.0
        }
        if shuffle { ordered.shuffle(using: &rng) }

        // Duplicates: a resend goes somewhere after its original (within the next 20 deliveries).
        var keyed: [(key: Double, delivery: PlannedDelivery)] = []
        for (position, (_, notification)) in ordered.enumerated() {
            keyed.append((Double(position), PlannedDelivery(notification: notification, isDuplicate: false)))
            if duplicateRate > 0, Double.random(in: 0..<1, using: &rng) < duplicateRate {
                let later = Double(position) + Double.random(in: 0.5...20, using: &rng)
                keyed.append((later, PlannedDelivery(notification: notification, isDuplicate: true)))
            }
        }
        keyed.sort { $0.key < $1.key }
        return Array(keyed.prefix(limit).map(\.delivery))
    }

    /// A 16-digit id like Apple's, leaving room for the transactions that follow it.
    static func originalTransactionID(using rng: inout SplitMix64) -> OriginalTransactionID {
        let number = 2_000_000_000_000_000 + Int64.random(in: 0..<1_000_000_000_000, using: &rng) * 1_000
        return OriginalTransactionID(String(number))
    }
}
