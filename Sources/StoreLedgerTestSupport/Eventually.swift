/// Waits until `condition` holds, looking every `interval`, for at most `limit`; returns whether it held. Tests use it
/// for what happens asynchronously (a worker draining, a server starting, replication catching up), so every wait is
/// bounded and none is a fixed sleep.
package func eventually(
    within limit: Duration = .seconds(60), every interval: Duration = .milliseconds(25), _ condition: () async throws -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: interval)
    }
    return try await condition()
}
