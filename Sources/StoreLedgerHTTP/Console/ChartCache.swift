import Foundation
import Logging
import StoreLedgerStore

/// The charts' numbers per snapshot and filter: the page, its six charts (two of which share one query) and their CSV
/// downloads read each result once per snapshot (kept at most ``lifetime``).
actor ChartCache {
    /// How long a result is served before it is read again.
    let lifetime: TimeInterval
    /// The most results kept (the oldest go first).
    let capacity: Int
    private var entries: [String: (at: Date, value: any Sendable)] = [:]

    /// Creates an empty cache.
    init(lifetime: TimeInterval = 600, capacity: Int = 120) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// The remembered value for `key` when fresh, else `compute()`'s (remembered), and when it was computed.
    func value<Value: Sendable>(_ key: String, now: Date = Date(), compute: @Sendable () async throws -> Value) async throws -> (Value, Date) {
        if let entry = entries[key], now.timeIntervalSince(entry.at) < lifetime, let value = entry.value as? Value { return (value, entry.at) }
        let value = try await compute()
        if entries.count >= capacity, let oldest = entries.min(by: { $0.value.at < $1.value.at })?.key { entries[oldest] = nil }
        entries[key] = (now, value)
        return (value, now)
    }
}

/// Reads ``ChartStore`` through a ``ChartCache``.
struct ChartLoader: Sendable {
    /// The store.
    let store: ChartStore
    /// The cache.
    let cache: ChartCache
    /// The logger for the statements.
    let logger: Logger
    /// The snapshot read (its time), part of every key: a new snapshot is read afresh.
    let version: String

    /// The key of one query for `filter`.
    private func key(_ query: String, _ filter: ChartFilter) -> String {
        [
            query, version, "\(filter.fromMonth.timeIntervalSince1970)", "\(filter.toMonth.timeIntervalSince1970)", filter.app ?? "\u{0}",
            filter.environment ?? "\u{0}", filter.product ?? "\u{0}",
        ].joined(separator: "\u{1}")
    }

    /// ``ChartStore/activity(_:logger:)``, cached.
    func activity(_ filter: ChartFilter) async throws -> ([ChartStore.Activity], Date) {
        try await cache.value(key("activity", filter)) { [store, logger] in try await store.activity(filter, logger: logger) }
    }

    /// ``ChartStore/churn(_:logger:)``, cached.
    func churn(_ filter: ChartFilter) async throws -> ([ChartStore.Churn], Date) {
        try await cache.value(key("churn", filter)) { [store, logger] in try await store.churn(filter, logger: logger) }
    }

    /// ``ChartStore/refunds(_:logger:)``, cached.
    func refunds(_ filter: ChartFilter) async throws -> ([ChartStore.Refunds], Date) {
        try await cache.value(key("refunds", filter)) { [store, logger] in try await store.refunds(filter, logger: logger) }
    }

    /// ``ChartStore/trials(_:logger:)``, cached.
    func trials(_ filter: ChartFilter) async throws -> ([ChartStore.Trials], Date) {
        try await cache.value(key("trials", filter)) { [store, logger] in try await store.trials(filter, logger: logger) }
    }

    /// ``ChartStore/starts(_:logger:)``, cached.
    func starts(_ filter: ChartFilter) async throws -> ([ChartStore.Starts], Date) {
        try await cache.value(key("starts", filter)) { [store, logger] in try await store.starts(filter, logger: logger) }
    }
}
