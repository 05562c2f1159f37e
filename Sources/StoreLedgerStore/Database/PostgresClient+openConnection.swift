package import Logging
package import PostgresNIO

extension PostgresClient {
    /// Runs `body` on a pooled connection that the server had not closed when it was leased.
    ///
    /// A connection the server has just closed (a terminated backend, a pooler or failover restart) can still be
    /// leased before the pool hears of the close, and PostgresNIO drops what is written to it without failing it:
    /// `body`'s first statement would wait forever, and its caller with it. Such a lease is given back unused, once
    /// the pool has heard of the close, and another taken; a caller whose every lease was closed (a restart that ended
    /// them all) gets ``StoreError/Code/unavailable``, nothing having been sent. A connection that closes after the
    /// check still drops what `body` writes next: callers that must answer in time keep their deadlines.
    package func withOpenConnection<Result>(
        logger: Logger,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        for attempt in 1...Self.closedLeaseAttempts {
            let result: Result? = try await withConnection(isolation: isolation) { connection in
                guard !connection.isClosed else {
                    // The pool hears of the close before this wait ends (its callback on the close came first), so the
                    // next lease is another connection.
                    try? await connection.closeFuture.get()
                    return nil
                }
                return try await body(connection)
            }
            if let result { return result }
            logger.notice("leased a connection the server had closed; leasing another", metadata: ["attempt": "\(attempt)"])
        }
        throw StoreError(.unavailable, "the database had closed every connection leased (\(Self.closedLeaseAttempts)); nothing was sent")
    }

    /// How many leases ``withOpenConnection(logger:isolation:_:)`` takes before giving up on finding an open
    /// connection.
    static let closedLeaseAttempts = 5

    /// Runs one statement on a connection leased with ``withOpenConnection(logger:isolation:_:)`` and returns its rows,
    /// read to the end (so an error that follows them is thrown here). For reads: a write goes through
    /// ``inTransaction(logger:sessions:limits:isolation:_:)``, whose `COMMIT` is checked. An error names the caller's
    /// `file` and `line`, as PostgresNIO's own `query` does.
    package func rows(_ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line) async throws -> [PostgresRow] {
        try await withOpenConnection(logger: logger) { connection in
            try await connection.query(query, logger: logger, file: file, line: line).readToEnd()
        }
    }
}

extension Array where Element == PostgresRow {
    /// Every row decoded as `type`.
    package func decode<Column: PostgresDecodable>(_ type: Column.Type) throws -> [Column] {
        try map { try $0.decode(Column.self) }
    }

    /// Every row decoded as the columns `types`.
    package func decode<each Column: PostgresDecodable>(_ types: (repeat each Column).Type) throws -> [(repeat each Column)] {
        try map { try $0.decode(types) }
    }
}
