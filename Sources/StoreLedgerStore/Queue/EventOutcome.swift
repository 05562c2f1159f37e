/// What processing one claimed event came to.
package enum EventOutcome: Sendable, Hashable {
    /// Processed; the event is finished.
    case done
    /// Failed for a reason that may pass (a database error, a network failure): try again later.
    case retry(reason: String)
    /// Can never succeed (it does not verify, it is not a notification): park it as `rejected`.
    case reject(reason: String)
}
