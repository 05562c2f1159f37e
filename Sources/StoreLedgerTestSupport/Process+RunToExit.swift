import Foundation

extension Process {
    /// Starts the process and returns once it has exited, or at once when it could not start (its `processIdentifier`
    /// is then 0). `waitUntilExit()` can hang under Swift concurrency on Linux; the termination handler does not.
    package func runToExit() async {
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
