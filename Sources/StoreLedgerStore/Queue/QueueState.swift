/// The processing state of an event in `event_queue`.
package enum QueueState: String, Sendable, Hashable, CaseIterable, Codable {
    /// Waiting to be claimed (possibly not before its `available_at`).
    case pending
    /// Claimed by a worker under a lease.
    case processing
    /// Processed.
    case done
    /// Can never be processed (for example it does not verify); the reason is kept.
    case rejected
    /// Failed on every allowed attempt; the error history is kept.
    case dead
}
