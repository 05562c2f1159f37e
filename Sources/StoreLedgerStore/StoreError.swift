/// An error from the storage layer, in the extensible-struct shape: new codes can be added
/// without breaking callers that switch on ``code``.
package struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of storage error this is.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case configuration, schemaBehind, schemaAhead, migrationChanged, unavailable, notWritable, leaseLost, notCommitted, concurrentChange,
                invariantBroken, handlerContract, rebuildSwapping
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Invalid configuration (for example a malformed `DATABASE_URL`).
        package static let configuration = Code(.configuration)
        /// The database schema is older than this build expects; run `storeledger migrate`.
        package static let schemaBehind = Code(.schemaBehind)
        /// The database has migrations this build does not know (a newer build migrated it).
        package static let schemaAhead = Code(.schemaAhead)
        /// An applied migration's SQL differs from the file with the same version.
        package static let migrationChanged = Code(.migrationChanged)
        /// The database could not be reached or did not answer in time.
        package static let unavailable = Code(.unavailable)
        /// The database answers but cannot store events: a standby in recovery, read-only sessions, or a role without
        /// INSERT on the log (``DatabaseWritability``).
        package static let notWritable = Code(.notWritable)
        /// A worker tried to finish events whose lease it no longer holds.
        package static let leaseLost = Code(.leaseLost)
        /// A transaction did not commit: its `COMMIT` failed or answered `ROLLBACK` (an earlier statement had failed).
        /// Nothing it wrote is stored; whatever it was to acknowledge must not be acknowledged.
        package static let notCommitted = Code(.notCommitted)
        /// Another process changed what this one was working on (a fact removed by a rebuild's swap mid-refold); the
        /// work is retried.
        package static let concurrentChange = Code(.concurrentChange)
        /// The database answered something that cannot happen if the schema and the code agree (an insert that returned
        /// no row, a value the read model cannot store): a bug or a schema out of step, not an outage.
        package static let invariantBroken = Code(.invariantBroken)
        /// An event handler broke its contract with the worker (for example, not one outcome per event).
        package static let handlerContract = Code(.handlerContract)
        /// A rebuild's swap holds the read model's tables (for minutes on a large ledger): a writer that would wait for
        /// them was turned away instead, having stored nothing; retry in a few seconds.
        package static let rebuildSwapping = Code(.rebuildSwapping)

        /// The code's name.
        package var description: String { base.rawValue }
    }

    /// The error's code.
    package let code: Code
    /// A sentence for operators saying what happened and what to do.
    package let detail: String

    /// Creates an error with a code and detail.
    package init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// A configuration error.
    package static func configuration(_ detail: String) -> StoreError { .init(.configuration, detail) }

    /// `code: detail`.
    package var description: String { "\(code): \(detail)" }
}
