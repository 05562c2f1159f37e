import Synchronization

/// A migration that runs once however many parts of a process ask for it: the first caller starts it, the others
/// wait for the same run and get its outcome. `dev` needs the schema current before its server starts and before its
/// worker claims; both await this one step.
final class MigrationOnce: Sendable {
    private let migrate: @Sendable () async throws -> Void
    private let task = Mutex<Task<Void, any Error>?>(nil)

    /// A step that runs `migrate` at most once.
    init(_ migrate: @escaping @Sendable () async throws -> Void) {
        self.migrate = migrate
    }

    /// Runs the migration, or waits for the run already started; rethrows its error.
    func run() async throws {
        let task = task.withLock { task in
            if let task { return task }
            let started = Task { [migrate] in try await migrate() }
            task = started
            return started
        }
        try await task.value
    }
}
