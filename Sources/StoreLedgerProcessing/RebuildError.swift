/// Why a rebuild stopped without swapping, in the extensible-struct shape: new codes can be added without breaking
/// callers that switch on ``code``.
package struct RebuildError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of rebuild error this is.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case newRejections
            case archivedEvents
            case shadowLost
            case shadowReplaced
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Events the workers verified do not verify in this rebuild: its trust or app configuration differs from the
        /// workers' (`--accept-new-rejections` swaps anyway).
        package static let newRejections = Code(.newRejections)
        /// Months of the log were detached for archiving: a rebuild replays only what the log still holds and would drop
        /// the facts their events recorded (`--accept-archived-events` swaps anyway).
        package static let archivedEvents = Code(.archivedEvents)
        /// PostgreSQL restarted after a crash during the rebuild and emptied the shadow's unlogged tables: nothing was
        /// swapped; run the rebuild again.
        package static let shadowLost = Code(.shadowLost)
        /// Another rebuild started meanwhile and replaced this one's shadow with its own (the later one goes on):
        /// nothing was swapped by this one.
        package static let shadowReplaced = Code(.shadowReplaced)

        /// The code's name.
        package var description: String { base.rawValue }
    }

    /// The error's code.
    package let code: Code
    /// What stopped it and what to check.
    package let detail: String

    /// Creates an error with a code and detail.
    package init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// `code: detail`.
    package var description: String { "\(code): \(detail)" }
}
