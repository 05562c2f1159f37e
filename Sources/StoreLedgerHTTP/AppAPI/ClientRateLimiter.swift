package import Foundation
import Synchronization

/// Token buckets per client key and one for all clients together: each key may spend `perClient` requests per
/// minute (refilled continuously, bursts up to `perClient`), and all keys together `total` per minute.
///
/// In memory, per process: with N server processes a client may get N times its share. At most
/// ``maximumTrackedClients`` keys are kept; beyond that, buckets that have refilled completely are forgotten first
/// (they carry no information), then the longest idle.
package final class ClientRateLimiter: Sendable {
    /// The outcome of asking for one request.
    package enum Decision: Equatable, Sendable {
        /// Go ahead.
        case allowed
        /// Refused; a request may succeed after this many seconds (at least 1).
        case limited(retryAfterSeconds: Int)
    }

    /// The most client keys kept at once.
    package static let maximumTrackedClients = 100_000

    /// Requests per minute each client may make.
    package let perClient: Int
    /// Requests per minute all clients together may make.
    package let total: Int

    private struct Bucket {
        var tokens: Double
        var updated: Date
    }

    private struct State {
        var clients: [String: Bucket] = [:]
        var all: Bucket
    }

    private let state: Mutex<State>

    /// Creates a limiter of `perClient` requests per minute per client and `total` for everyone (both ≥ 1).
    package init(perClient: Int, total: Int) {
        self.perClient = max(1, perClient)
        self.total = max(1, total)
        self.state = Mutex(State(all: Bucket(tokens: Double(max(1, total)), updated: .distantPast)))
    }

    /// Spends one request of `key` at `now`, or says how long to wait. A refused request spends nothing.
    package func acquire(_ key: String, now: Date) -> Decision {
        let perClient = Double(self.perClient)
        let total = Double(self.total)
        return state.withLock { state in
            var client = state.clients[key] ?? Bucket(tokens: perClient, updated: now)
            Self.refill(&client, capacity: perClient, now: now)
            Self.refill(&state.all, capacity: total, now: now)
            guard client.tokens >= 1, state.all.tokens >= 1 else {
                let wait = max(Self.wait(client, capacity: perClient), Self.wait(state.all, capacity: total))
                state.clients[key] = client
                return .limited(retryAfterSeconds: wait)
            }
            client.tokens -= 1
            state.all.tokens -= 1
            state.clients[key] = client
            if state.clients.count > Self.maximumTrackedClients { Self.forget(&state.clients, capacity: perClient, now: now) }
            return .allowed
        }
    }

    /// Adds the tokens earned since the bucket was last updated (a clock going backwards earns nothing).
    private static func refill(_ bucket: inout Bucket, capacity: Double, now: Date) {
        let elapsed = now.timeIntervalSince(bucket.updated)
        if elapsed > 0 {
            bucket.tokens = min(capacity, bucket.tokens + elapsed * capacity / 60)
            bucket.updated = now
        }
    }

    /// Whole seconds until the bucket holds one token.
    private static func wait(_ bucket: Bucket, capacity: Double) -> Int {
        guard bucket.tokens < 1 else { return 0 }
        return max(1, Int(((1 - bucket.tokens) * 60 / capacity).rounded(.up)))
    }

    /// Drops full buckets, then the longest idle, until a tenth of the room is free again.
    private static func forget(_ clients: inout [String: Bucket], capacity: Double, now: Date) {
        let target = maximumTrackedClients * 9 / 10
        for (key, bucket) in clients where bucket.tokens + now.timeIntervalSince(bucket.updated) * capacity / 60 >= capacity {
            clients[key] = nil
        }
        guard clients.count > target else { return }
        for (key, _) in clients.sorted(by: { $0.value.updated < $1.value.updated }).prefix(clients.count - target) {
            clients[key] = nil
        }
    }
}
