import Foundation
package import Logging
package import PostgresNIO
import StoreLedgerCore
package import StoreLedgerStore

/// Rebuilds the facts and the read model from the event log, without downtime.
///
/// 1. **Replay**: every event up to the log's current end is re-verified (offline, at its `signedDate`) and applied
///    by the same ``LedgerHandler`` into shadow tables (``ShadowSchema``), batch by batch.
/// 2. **Catch-up**: events that arrived meanwhile are replayed the same way, until few remain.
/// 3. **Swap**: in one transaction that blocks writers of the live derived tables (readers go on; receivers never
///    block), the last events are replayed, and so are events that committed after a later id was read (ids are
///    drawn when an append starts: the earlier reads passed over them), then the live tables are made equal to the
///    shadow, writing only rows that differ. Workers wait for the commit, then go on; because every row is a fold of all its facts, what
///    they write afterwards agrees with the rebuild. Nothing is lost or applied twice: facts are keyed by content.
///
/// A dry run stops before the swap and reports the rows that would change.
///
/// Both cores work: each batch is verified by `verificationConcurrency` tasks at once (each a contiguous slice; the
/// results are put back in event order), `applyConcurrency` batches are written side by side in transactions of their
/// own (a row is a fold of the set of its facts, so the order they commit in does not matter; only re-deliveries of a
/// notification wait for its first delivery's commit), and the next batches are read and verified while those are
/// written: the rebuild's CPU work and PostgreSQL's overlap instead of taking turns.
package struct Rebuilder: Sendable {
    /// The database.
    package let client: PostgresClient
    /// The handler (same verifiers as the workers').
    package let handler: LedgerHandler
    /// Events per batch.
    package let batchSize: Int
    /// Catch-up stops and the swap starts when fewer new events than this remain.
    package let catchUpThreshold: Int
    /// Whether to go on when events the workers verified no longer verify (their facts would be dropped).
    package let acceptNewRejections: Bool
    /// Whether to swap when months of the log were detached for archiving (the facts their events recorded would be
    /// dropped).
    package let acceptArchivedEvents: Bool
    /// How many tasks verify a batch at once (nil at creation: the active processor count).
    package let verificationConcurrency: Int
    /// How many batches are written at once, each in its own transaction (the rebuild then holds this many
    /// connections besides the one that reads).
    package let applyConcurrency: Int
    /// The limits of the rebuild's transactions (``defaultTransactionLimits``).
    package let transactionLimits: TransactionLimits
    /// How long the swap waits for the live tables' locks before it gives up and tries again later. While it waits
    /// in the lock queue, every later writer of those tables waits behind it and workers claim nothing, so it is short.
    package let swapLockWait: Duration
    /// The pause before a swap that could not take its locks in time is tried again.
    package let swapRetryPause: Duration

    /// The rebuild's transactions may sit idle (the rebuild between two statements) for 5 minutes: a rebuild that stalls
    /// or vanishes inside one (a paused VM, a stopped process, a sleeping laptop) is ended by the server then, its
    /// locks released. Without it, a stalled swap held every worker's claims off, and a stalled batch held the
    /// subscriptions it locked, until TCP gave up on the session hours later, or never. The swap's own work between
    /// statements (announcing every changed row to webhooks) stays far below that. A replay batch waits 5 minutes for a
    /// lock (live workers hold the subscriptions they project for at most their lease), the swap ``swapLockWait``
    /// before it gives up and tries again, up to ``swapAttempts`` times, its shadow kept; a statement may run for a day
    /// (a safety net: the swap's merge of a large ledger takes minutes).
    package static let defaultTransactionLimits = TransactionLimits(lockWait: .seconds(300), statement: .seconds(86_400), idle: .seconds(300))

    /// Creates a rebuilder.
    package init(
        client: PostgresClient, handler: LedgerHandler, batchSize: Int = 500, catchUpThreshold: Int = 100, acceptNewRejections: Bool = false,
        acceptArchivedEvents: Bool = false, verificationConcurrency: Int? = nil, applyConcurrency: Int = 2,
        transactionLimits: TransactionLimits = Rebuilder.defaultTransactionLimits, swapLockWait: Duration = .seconds(30),
        swapRetryPause: Duration = .seconds(10)
    ) {
        self.applyConcurrency = max(1, applyConcurrency)
        self.transactionLimits = transactionLimits
        self.swapLockWait = swapLockWait
        self.swapRetryPause = swapRetryPause
        self.acceptNewRejections = acceptNewRejections
        self.acceptArchivedEvents = acceptArchivedEvents
        self.verificationConcurrency = max(1, verificationConcurrency ?? ProcessInfo.processInfo.activeProcessorCount)
        self.client = client
        var handler = handler
        // The shadow's changes are not news: only the swap into the live tables is.
        handler.emitsWebhookEvents = false
        self.handler = handler
        self.batchSize = max(1, batchSize)
        self.catchUpThreshold = max(1, catchUpThreshold)
    }

    /// Runs the rebuild. `progress` gets a line per batch; `beforeSwap` runs after catch-up, before the swap
    /// (tests use it to deliver events "during" a rebuild), once; `duringSwap` runs inside the swap's transaction once
    /// the live tables are locked, on each attempt that gets that far (tests use it to stall the swap).
    package func run(
        dryRun: Bool, logger: Logger,
        progress: @Sendable (RebuildProgress) -> Void = { _ in },
        beforeSwap: @Sendable () async throws -> Void = {},
        duringSwap: @Sendable () async throws -> Void = {}
    ) async throws -> RebuildReport {
        let archived = try await client.withOpenConnection(logger: logger) { try await EventPage.countArchived(on: $0, logger: logger) }
        if archived > 0 {
            let detail =
                "\(archived) event(s) of the queue are no longer in the log (their months were detached for archiving): a rebuild "
                + "replays only the log it has, so it would drop the facts those events recorded"
            guard dryRun || acceptArchivedEvents else {
                throw RebuildError(
                    .archivedEvents, detail + "; nothing was swapped: attach the archived months again, or pass --accept-archived-events")
            }
            logger.warning("rebuild: \(detail)")
        }
        let shadow = UUID()
        // In one transaction: a rebuild running meanwhile never sees a half-made shadow (nor drops it as emptied).
        try await client.inTransaction(logger: logger) { try await ShadowSchema.create(for: shadow, on: $0, logger: logger) }
        do {
            let report = try await rebuild(
                shadow, dryRun: dryRun, logger: logger, progress: progress, beforeSwap: beforeSwap, duringSwap: duringSwap)
            await dropShadowAfterwards(shadow, logger: logger)
            return report
        } catch {
            // A batch under way when another rebuild replaced the shadow fails on the dropped tables themselves, not at
            // the holder check: say what happened.
            var replaced = false
            if !(error is RebuildError) {
                replaced =
                    (try? await client.withOpenConnection(logger: logger) { try await ShadowSchema.holder(for: shadow, on: $0, logger: logger) })
                    == .another
            }
            try? await client.withOpenConnection(logger: logger) { try await ShadowSchema.drop(ifHeldBy: shadow, on: $0, logger: logger) }
            if replaced { throw Self.shadowReplaced(cause: error) }
            throw error
        }
    }

    private func rebuild(
        _ shadow: UUID, dryRun: Bool, logger: Logger, progress: @Sendable (RebuildProgress) -> Void,
        beforeSwap: @Sendable () async throws -> Void, duringSwap: @Sendable () async throws -> Void
    ) async throws -> RebuildReport {
        let start = ContinuousClock.now
        var state = (last: Int64(0), processed: 0, rejected: 0)
        func report(_ phase: String, target: Int) {
            let seconds = max(
                0.001, Double((ContinuousClock.now - start).components.attoseconds) / 1e18 + Double((ContinuousClock.now - start).components.seconds))
            let rate = Double(state.processed) / seconds
            let left = max(0, target - state.processed)
            progress(
                RebuildProgress(phase: phase, processed: state.processed, total: target, rate: rate, etaSeconds: rate > 0 ? Double(left) / rate : nil)
            )
        }
        // Replay, then catch up until the tail is short. An id is drawn when its append starts, not when it commits, so a
        // page can pass over an event that commits later (group commits side by side, several receivers): the ids
        // between those read are kept, and the swap reads them again.
        var gaps: [ClosedRange<Int64>] = []
        var phase = "replay"
        var swapAttempts = 0
        while true {
            while true {
                let end = try await client.withOpenConnection(logger: logger) { try await EventPage.highestID(on: $0, logger: logger) }
                let pending = try await client.withOpenConnection(logger: logger) {
                    try await EventPage.count(after: state.last, through: end, on: $0, logger: logger)
                }
                if phase == "catch-up" && pending < catchUpThreshold { break }
                let target = state.processed + pending
                // `applyConcurrency` batches are written side by side, each in its own transaction, while the next ones
                // are read and verified.
                var pages = try await readAndPrepare(applyConcurrency, after: state.last, through: end, logger: logger)
                while let lastID = pages.last?.lastID {
                    async let upcoming = lastID < end ? readAndPrepare(applyConcurrency, after: lastID, through: end, logger: logger) : []
                    gaps += Self.gaps(after: state.last, in: pages.lazy.flatMap { $0.events.lazy.map(\.id.rawValue) })
                    let rejected = try await applySideBySide(pages, into: shadow, dryRun: dryRun, logger: logger)
                    state = (lastID, state.processed + pages.reduce(0) { $0 + $1.events.count }, state.rejected + rejected)
                    report(phase, target: target)
                    pages = try await upcoming
                }
                if phase == "replay" { phase = "catch-up" } else if pending == 0 { break }
            }
            if swapAttempts == 0 { try await beforeSwap() }
            swapAttempts += 1
            do {
                let (differences, changed, tail, tailRejected) = try await swap(
                    shadow, after: state.last, gaps: gaps, dryRun: dryRun, logger: logger, duringSwap: duringSwap)
                state.processed += tail
                state.rejected += tailRejected
                report("swap", target: state.processed)
                return RebuildReport(
                    eventsReplayed: state.processed, eventsRejected: state.rejected, differences: differences, rowsChanged: changed,
                    swapped: !dryRun
                )
            } catch let error as PSQLError where error.isLockTimeout && swapAttempts < Self.swapAttempts {
                // A lock the swap needs is held past the lock limit (a long transaction, a VACUUM that will not yield):
                // nothing was swapped and the shadow is whole; catch up with what arrived meanwhile and try again.
                logger.warning(
                    "rebuild: the swap could not lock the live tables in time; catching up and trying again",
                    metadata: ["attempt": "\(swapAttempts)", "of": "\(Self.swapAttempts)"])
                try await Task.sleep(for: swapRetryPause)
            }
        }
    }

    /// How many times the swap is tried when a lock it needs is not granted within ``swapLockWait``.
    static let swapAttempts = 10

    /// Drops this rebuild's shadow once the rebuild is done. Best effort: a swap has committed by then, so a drop that
    /// fails, or waits past ``swapLockWait`` for a session still reading the shadow, leaves it (the next rebuild
    /// replaces it; `DROP SCHEMA storeledger_rebuild CASCADE` frees the space) with a warning, rather than report a
    /// committed swap as a failed rebuild.
    private func dropShadowAfterwards(_ shadow: UUID, logger: Logger) async {
        let limits = TransactionLimits(lockWait: swapLockWait, statement: .seconds(300), idle: .seconds(60))
        do {
            try await client.inTransaction(logger: logger, limits: limits) { try await ShadowSchema.drop(ifHeldBy: shadow, on: $0, logger: logger) }
        } catch {
            logger.warning(
                "rebuild: done, but its shadow tables were not dropped; the next rebuild replaces them, and DROP SCHEMA \(ShadowSchema.name) CASCADE frees the space",
                metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    /// The swap, in one transaction: block writers of the live derived tables, replay the events after `last` and those
    /// in `gaps`, compare, and (unless `dryRun`) merge into the live tables and announce the changes. Returns the
    /// differences, the rows changed per table, and how many events it replayed and of them rejected.
    private func swap(
        _ shadow: UUID, after last: Int64, gaps: [ClosedRange<Int64>], dryRun: Bool, logger: Logger,
        duringSwap: @Sendable () async throws -> Void
    ) async throws -> (differences: [ShadowSchema.Difference], changed: [String: Int], tail: Int, tailRejected: Int) {
        var limits = transactionLimits
        limits.lockWait = swapLockWait
        return try await client.inTransaction(logger: logger, limits: limits) { connection in
            try await ShadowSchema.lockLiveTables(on: connection, logger: logger)
            try await duringSwap()
            // Checked inside the swap's transaction: a crash or another rebuild's start after this point waits for it
            // or ends it too.
            try await checkHolder(shadow, on: connection, logger: logger)
            let end = try await EventPage.highestID(on: connection, logger: logger)
            var tail = 0
            var tailRejected = 0
            // Events that committed in a gap after the pages around it were read. A worker may have applied one since;
            // the shadow must hold it too, or the merge would delete what the worker wrote. (Under the lock, any event
            // a worker applied has committed, so this read and the tail's see it.)
            let late = try await EventPage.read(in: gaps, on: connection, logger: logger)
            for start in stride(from: 0, to: late.count, by: batchSize) {
                let events = Array(late[start..<min(start + batchSize, late.count)])
                tailRejected += try await replay(events, into: shadow, dryRun: dryRun, on: connection, logger: logger)
                tail += events.count
            }
            var cursor = last
            while cursor < end {
                let events = try await EventPage.read(after: cursor, through: end, limit: batchSize, on: connection, logger: logger)
                guard let lastID = events.last?.id.rawValue else { break }
                tailRejected += try await replay(events, into: shadow, dryRun: dryRun, on: connection, logger: logger)
                tail += events.count
                cursor = lastID
            }
            var differences: [ShadowSchema.Difference] = []
            for table in ShadowSchema.reportedTables {
                differences += try await ShadowSchema.differences(in: table, on: connection, logger: logger)
            }
            try await refuseToRemoveVerifiedFacts(dryRun: dryRun, on: connection, logger: logger)
            guard !dryRun else { return (differences, [String: Int](), tail, tailRejected) }
            // The swap's entitlement changes are news like a worker's: a repaired row, or an event the rebuild applied
            // before any worker did (a worker then finds its facts recorded and projects nothing).
            let events = try await swapWebhookEvents(on: connection, logger: logger)
            let changed = try await ShadowSchema.mergeIntoLive(on: connection, logger: logger)
            // No purchase or token locks: the swap holds the live tables, so no claim or post runs beside it.
            try await WebhookOutbox.enqueue(events, locking: false, on: connection, logger: logger)
            return (differences, changed, tail, tailRejected)
        }
    }

    /// The swap's last word on dropping verified facts, read from the ledger under the swap's locks: the checks while
    /// replaying count the queue's `done` rows, which operators prune and which a worker may add after the page was
    /// read (an event still pending then, verified by a worker since). Facts of events this rebuild did not verify need
    /// `acceptNewRejections`, facts of events no longer in the log `acceptArchivedEvents`. A dry run warns of what the
    /// swap would refuse and goes on (its differences list those facts as removed rows).
    private func refuseToRemoveVerifiedFacts(dryRun: Bool, on connection: PostgresConnection, logger: Logger) async throws {
        let removed = try await ShadowSchema.factsTheMergeWouldRemove(on: connection, logger: logger)
        func refuse(_ error: RebuildError) throws {
            guard dryRun else { throw error }
            logger.warning("rebuild --dry-run: the swap would refuse: \(error.detail)")
        }
        if removed.ofLoggedEvents > 0 && !acceptNewRejections {
            try refuse(
                RebuildError(
                    .newRejections,
                    "the swap would remove \(removed.ofLoggedEvents) verified fact(s) of events still in the log that this rebuild did not "
                        + "verify (e.g. event \(removed.firstLoggedEvent ?? 0)): check APP_BUNDLE_ID, APP_APPLE_ID, APPLE_ROOT_CAS_DER_BASE64 and "
                        + "APPLE_ENVIRONMENTS against the workers'; nothing was swapped (--accept-new-rejections drops them)"
                ))
        }
        if removed.ofArchivedEvents > 0 && !acceptArchivedEvents {
            try refuse(
                RebuildError(
                    .archivedEvents,
                    "the swap would remove \(removed.ofArchivedEvents) verified fact(s) of events no longer in the log (their months were "
                        + "detached for archiving); nothing was swapped: attach the archived months again, or pass --accept-archived-events"
                ))
        }
    }

    /// The ids missing between `after` and each of `ids` in turn (ascending): the ranges a read in id order passed over.
    package static func gaps(after: Int64, in ids: some Sequence<Int64>) -> [ClosedRange<Int64>] {
        var gaps: [ClosedRange<Int64>] = []
        var previous = after
        for id in ids {
            if id > previous + 1 { gaps.append((previous + 1)...(id - 1)) }
            previous = max(previous, id)
        }
        return gaps
    }

    /// The webhook events of the rows the swap changes (none while no endpoint is active), one path for subscriptions
    /// and purchases.
    private func swapWebhookEvents(on connection: PostgresConnection, logger: Logger) async throws -> [WebhookEvent] {
        func events<State: StoredRow & ProjectedRow>(_ type: State.Type) async throws -> [WebhookEvent] {
            let changes = try await ReadModelStore.swapChangesIfWebhooksActive(type, shadow: ShadowSchema.name, on: connection, logger: logger)
            return (changes ?? []).flatMap { WebhookOutbox.events(old: $0.old, new: $0.new) }
        }
        return try await events(SubscriptionState.self) + events(PurchaseState.self)
    }

    /// A page of events and what verifying them gave, in event order.
    struct PreparedPage: Sendable {
        /// The events.
        let events: [ClaimedEvent]
        /// One prepared event per event, in the same order.
        let prepared: [PreparedEvent]
        /// The last event's id.
        var lastID: Int64 { events.last?.id.rawValue ?? 0 }
    }

    /// Reads the next page after `after` (nil when there is none) and verifies it.
    private func readAndPrepare(after: Int64, through end: Int64, logger: Logger) async throws -> PreparedPage? {
        let events = try await client.withOpenConnection(logger: logger) {
            try await EventPage.read(after: after, through: end, limit: batchSize, on: $0, logger: logger)
        }
        guard !events.isEmpty else { return nil }
        return PreparedPage(events: events, prepared: await prepare(events, logger: logger))
    }

    /// Reads and verifies up to `count` consecutive pages after `after` (fewer at the end of the log).
    private func readAndPrepare(_ count: Int, after: Int64, through end: Int64, logger: Logger) async throws -> [PreparedPage] {
        var pages: [PreparedPage] = []
        var cursor = after
        while pages.count < count, cursor < end, let page = try await readAndPrepare(after: cursor, through: end, logger: logger) {
            pages.append(page)
            cursor = page.lastID
        }
        return pages
    }

    /// Applies pages side by side, each in its own transaction on its own connection; returns how many of their
    /// events could not be verified. The order does not matter: every row is a fold of the set of its facts, rows are
    /// locked in a fixed order, and facts are written in key order. Only a notification row's content depends on order
    /// (it keeps its first delivery's): the events of a later page that deliver a notification an earlier page of the
    /// window delivers too (Apple's retries) are held back and applied after the others committed, in log order. A page
    /// that still meets a deadlock (which PostgreSQL resolves by failing one transaction) is applied again before those.
    func applySideBySide(_ pages: [PreparedPage], into shadow: UUID, dryRun: Bool, logger: Logger) async throws -> Int {
        let (sideBySide, after) = Self.splitForSideBySide(pages)
        var retry: [PreparedPage] = []
        let rejected = try await withThrowingTaskGroup(of: (Int, PreparedPage?).self) { group in
            for page in sideBySide {
                group.addTask {
                    do {
                        let rejected = try await client.inTransaction(logger: logger, limits: transactionLimits) {
                            try await apply(page, into: shadow, dryRun: dryRun, on: $0, logger: logger)
                        }
                        return (rejected, nil)
                    } catch let error as PSQLError where sideBySide.count > 1 && error.serverInfo?[.sqlState] == "40P01" {
                        logger.notice("rebuild: a batch met a deadlock; applying it again", metadata: ["last_event": "\(page.lastID)"])
                        return (0, page)
                    }
                }
            }
            var rejected = 0
            for try await (count, failed) in group {
                rejected += count
                if let failed { retry.append(failed) }
            }
            return rejected
        }
        var later = 0
        for page in retry.sorted(by: { $0.lastID < $1.lastID }) + after {
            later += try await client.inTransaction(logger: logger, limits: transactionLimits) {
                try await apply(page, into: shadow, dryRun: dryRun, on: $0, logger: logger)
            }
        }
        return rejected + later
    }

    /// Splits consecutive pages into those written side by side and, after them, in log order, the events of each
    /// later page that deliver a notification an earlier page delivers too (its row keeps its first delivery's content,
    /// so they must commit after it). Empty parts are left out.
    static func splitForSideBySide(_ pages: [PreparedPage]) -> (sideBySide: [PreparedPage], after: [PreparedPage]) {
        var seen: Set<NotificationUUID> = []
        var sideBySide: [PreparedPage] = []
        var after: [PreparedPage] = []
        for page in pages {
            let uuids = page.prepared.map(\.notificationUUID)
            // Held: delivered by an earlier page (a delivery repeated within the page is applied in its order there).
            let held = uuids.map { uuid in uuid.map(seen.contains) ?? false }
            for case let uuid? in uuids { seen.insert(uuid) }
            guard held.contains(true) else {
                sideBySide.append(page)  // the common case: the page as it is, not copied event by event
                continue
            }
            var now = (events: [ClaimedEvent](), prepared: [PreparedEvent]())
            var later = (events: [ClaimedEvent](), prepared: [PreparedEvent]())
            for (index, isHeld) in held.enumerated() {
                if isHeld {
                    later.events.append(page.events[index])
                    later.prepared.append(page.prepared[index])
                } else {
                    now.events.append(page.events[index])
                    now.prepared.append(page.prepared[index])
                }
            }
            if !now.events.isEmpty { sideBySide.append(PreparedPage(events: now.events, prepared: now.prepared)) }
            after.append(PreparedPage(events: later.events, prepared: later.prepared))
        }
        return (sideBySide, after)
    }

    /// Verifies `events` with `verificationConcurrency` tasks, each a contiguous slice; the results in event order.
    func prepare(_ events: [ClaimedEvent], logger: Logger) async -> [PreparedEvent] {
        let handler = handler
        let slices = min(verificationConcurrency, events.count)
        guard slices > 1 else {
            var prepared: [PreparedEvent] = []
            for event in events { prepared.append(await handler.prepare(event, logger: logger)) }
            return prepared
        }
        let size = (events.count + slices - 1) / slices
        return await withTaskGroup(of: (Int, [PreparedEvent]).self) { group in
            for (index, start) in stride(from: 0, to: events.count, by: size).enumerated() {
                let slice = events[start..<min(start + size, events.count)]
                group.addTask {
                    var prepared: [PreparedEvent] = []
                    prepared.reserveCapacity(slice.count)
                    for event in slice { prepared.append(await handler.prepare(event, logger: logger)) }
                    return (index, prepared)
                }
            }
            var parts: [Int: [PreparedEvent]] = [:]
            for await (index, prepared) in group { parts[index] = prepared }
            return parts.keys.sorted().flatMap { parts[$0] ?? [] }
        }
    }

    /// Verifies and applies `events` into the shadow tables within the caller's transaction; returns how many
    /// could not be verified.
    private func replay(
        _ events: [ClaimedEvent], into shadow: UUID, dryRun: Bool, on connection: PostgresConnection, logger: Logger
    ) async throws
        -> Int
    {
        try await apply(
            PreparedPage(events: events, prepared: await prepare(events, logger: logger)), into: shadow, dryRun: dryRun, on: connection,
            logger: logger)
    }

    /// Throws unless the shadow is still the one this rebuild created and holds everything it wrote: a crash empties
    /// it (its tables are unlogged), another rebuild's start replaces it. Merging either would delete live rows.
    private func checkHolder(_ shadow: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        switch try await ShadowSchema.holder(for: shadow, on: connection, logger: logger) {
        case .this: return
        case .emptied:
            throw RebuildError(
                .shadowLost,
                "PostgreSQL restarted after a crash during the rebuild, which emptied the shadow tables (they are unlogged); "
                    + "nothing was swapped: run the rebuild again"
            )
        case .another:
            throw Self.shadowReplaced()
        }
    }

    /// The error of a rebuild whose shadow another rebuild replaced, seen at the holder check or, as `cause`, on the
    /// replaced tables themselves.
    private static func shadowReplaced(cause: (any Error)? = nil) -> RebuildError {
        RebuildError(
            .shadowReplaced,
            "another rebuild started meanwhile and replaced this one's shadow tables with its own; it goes on, this one "
                + "swapped nothing" + (cause.map { " (\(String(reflecting: $0)))" } ?? ""))
    }

    /// Applies a verified page into the shadow tables within the caller's transaction; returns how many of its events
    /// could not be verified. A rebuild that would swap stops at the first page whose events the workers verified and
    /// this one cannot (unless `acceptNewRejections`), rather than after replaying the whole log; a dry run goes on, and
    /// the swap's check, which is the last word, warns and lists what those facts made.
    private func apply(
        _ page: PreparedPage, into shadow: UUID, dryRun: Bool, on connection: PostgresConnection, logger: Logger
    ) async throws
        -> Int
    {
        let events = page.events
        try await checkHolder(shadow, on: connection, logger: logger)
        try await ShadowSchema.use(on: connection, logger: logger)
        let outcomes = try await handler.apply(page.prepared, in: connection, logger: logger)
        try await ShadowSchema.leave(on: connection, logger: logger)
        let unverified = zip(events, outcomes).compactMap { event, outcome -> Int64? in
            if case .done = outcome { return nil }
            return event.id.rawValue
        }
        guard !unverified.isEmpty, !dryRun, !acceptNewRejections else { return unverified.count }
        // Events the live ledger verified but this replay cannot: a trust or app configuration that differs from the
        // workers'. Swapping would drop their facts, so the rebuild refuses unless told otherwise.
        let count = try await EventPage.countDone(unverified, on: connection, logger: logger)
        if count > 0 {
            throw RebuildError(
                .newRejections,
                "\(count) event(s) the workers verified do not verify in this rebuild (e.g. event \(unverified[0])): check APP_BUNDLE_ID, "
                    + "APP_APPLE_ID, APPLE_ROOT_CAS_DER_BASE64 and APPLE_ENVIRONMENTS against the workers'; nothing was swapped "
                    + "(--dry-run lists what would change, --accept-new-rejections drops their facts)"
            )
        }
        return unverified.count
    }
}
