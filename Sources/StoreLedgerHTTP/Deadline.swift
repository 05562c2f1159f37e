/// Thrown by ``withDeadline(_:operation:)`` when the operation did not finish in time.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    /// How long the operation was given.
    public let limit: Duration
    /// Says the limit.
    public var description: String { "did not finish within \(limit)" }
}

/// Runs `operation`, cancelling it and throwing ``DeadlineExceeded`` if it takes longer than `limit`.
public func withDeadline<Result: Sendable>(
    _ limit: Duration,
    operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Result?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let result = first else {
            throw DeadlineExceeded(limit: limit)
        }
        return result
    }
}
