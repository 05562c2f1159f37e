import Foundation

extension Process {
    /// Starts the process and returns once it has exited, or at once when it could not start (its `processIdentifier`
    /// is then 0). `waitUntilExit()` can hang under Swift concurrency on Linux; the termination handler does not. One
    /// that outlives `limit` is sent SIGTERM, then SIGKILL 10 s later, so that no test waits on a child for ever.
    package func runToExit(limit: Duration = .seconds(300)) async {
        let watchdog = Task { [self] in
            try await Task.sleep(for: limit)
            guard isRunning else { return }
            terminate()
            try await Task.sleep(for: .seconds(10))
            if isRunning { kill(processIdentifier, SIGKILL) }
        }
        defer { watchdog.cancel() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            terminationHandler = { _ in continuation.resume() }
            do {
                try run()
            } catch {
                terminationHandler = nil
                continuation.resume()
            }
        }
    }
}
