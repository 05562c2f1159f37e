import Foundation
import PostgresNIO
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// Operator commands refuse nonsense before they touch anything: the real `storeledger` binary, no database needed
/// (validation runs first), exit status 64 (a usage error) and a message naming the option.
@Suite("Command line: options are checked before anything runs")
struct CommandLineValidationTests {
    /// Runs `storeledger` with `arguments` (no database configured) and returns its exit status and output.
    static func run(
        _ arguments: [String], databaseURL: String = "postgres://nobody@127.0.0.1:1/none"
    ) async throws -> (status: Int32?, output: String) {
        let process = try StoreLedgerProcess(arguments, environment: ["DATABASE_URL": databaseURL])
        defer { process.cleanUp() }
        let status = await process.waitForExit(within: .seconds(60))
        return (status, process.output)
    }

    @Test(arguments: [
        (["rebuild", "--show=-1"], "--show must be 0 or more"),
        (["rebuild", "--batch-size", "0"], "--batch-size must be at least 1"),
        (["reconcile", "--hours", "nan"], "--hours must be more than 0"),
        (["reconcile", "--hours=-24"], "--hours must be more than 0"),
        (["reconcile", "--hours", "1e16"], "--hours must be more than 0"),
        (["reconcile", "--since", "2020-01-01T00:00:00Z", "--hours", "2"], "give --since or --hours, not both"),
        (["reconcile", "--since", "2999-01-01T00:00:00Z"], "is not in the past"),
        (["reconcile", "--since", "yesterday"], "is not an RFC 3339 time"),
        (["partitions", "ensure", "--months-ahead=-5"], "--months-ahead must be 0 to 120"),
        (["partitions", "ensure", "--months-ahead", "3000000000"], "--months-ahead must be 0 to 120"),
        (["partitions", "detach", "--before", "2999-01"], "is after this month"),
        (["partitions", "detach", "--before=-2026-01"], "is not YYYY-MM"),
        (["replay", "--from", "2026-11-01T00:00:00Z", "--to", "yesterday"], "must both be event ids or both RFC 3339 times"),
        // Fractional seconds are read (then the order is what is refused).
        (["replay", "--from", "2026-11-01T00:00:00.5Z", "--to", "2026-11-01T00:00:00Z"], "is not before --to"),
        (["reconcile", "--since", "2999-01-01T00:00:00.5+01:00"], "is not in the past"),
        (["replay", "--from", "1", "--to", "2", "--reason", " "], "--reason is empty"),
        (["requeue", "--dead", "--reason", ""], "--reason is empty"),
        (["requeue", "--dead", "--reason", String(repeating: "x", count: 1_001)], "--reason is longer than 1000 characters"),
        (["requeue", "--dead", "--reason", "fixed", "--by", ""], "--by is empty"),
        (["api-key", "create", ""], "is not a valid key name"),
        (["api-key", "create", "   "], "is not a valid key name"),
    ])
    func nonsenseIsRefusedWithAMessageNamingTheOption(_ arguments: [String], _ message: String) async throws {
        let run = try await Self.run(arguments)
        #expect(run.status == 64, "\(arguments): \(run.output)")
        #expect(run.output.contains(message), "\(arguments): \(run.output)")
    }

    /// A command's first statement waits for its client's task to have started: asked for before, PostgresNIO logs a
    /// warning ("`PostgresClient.run()` hasn't been called yet") that an operator would take for a fault (in five of
    /// eight `migrate --check` runs before).
    @Test func aCommandLogsNoWarningAboutItsOwnStartUp() async throws {
        try await TestDatabase.withFresh { db in
            for _ in 0..<6 {
                let run = try await CommandRun.storeledger(["migrate", "--check"], environment: ["DATABASE_URL": db.url.connectionString])
                #expect(run.status == 0, "\(run.output)")
                #expect(!run.output.contains("hasn't been called yet"), "\(run.output)")
            }
        }
    }

    /// `migrate --check` (the deploy samples' init containers) follows the rule `serve` and `work` start by: 3 while this
    /// build's migrations are pending (wait), 0 when current or merely ahead (a newer build migrated first: a receiver
    /// without the app API runs on it), 1 with the reason when an applied migration was edited.
    @Test func migrateCheckWaitsOnPendingPassesAheadAndRefusesAnEditedMigration() async throws {
        try await TestDatabase.withFresh(migrated: false) { db in
            let url = db.url.connectionString
            let pending = try await Self.run(["migrate", "--check"], databaseURL: url)
            #expect(pending.status == 3, "\(pending.output)")
            #expect(pending.output.contains("applied: none\n"), "\(pending.output)")
            #expect(try await Self.run(["migrate"], databaseURL: url).status == 0)
            let current = try await Self.run(["migrate", "--check"], databaseURL: url)
            #expect(current.status == 0, "\(current.output)")
            #expect(current.output.contains("pending: none\n"), "\(current.output)")
            try await db.client.query(
                "INSERT INTO schema_migrations (version, name, checksum) VALUES (99999, '99999_newer.sql', 'x')", logger: db.logger
            ).readToEnd()
            let ahead = try await Self.run(["migrate", "--check"], databaseURL: url)
            #expect(ahead.status == 0, "\(ahead.output)")
            #expect(ahead.output.contains("unknown to this build: 99999"), "\(ahead.output)")
            try await db.client.query("UPDATE schema_migrations SET checksum = 'edited' WHERE version = 1", logger: db.logger).readToEnd()
            let edited = try await Self.run(["migrate", "--check"], databaseURL: url)
            #expect(edited.status == 1, "\(edited.output)")
            #expect(edited.output.contains("edited since applied: 1"), "\(edited.output)")
            #expect(edited.output.contains("never edit an applied migration"), "\(edited.output)")
        }
    }

    /// A refusal that needs the database to know (nothing by that name, a name taken) is not a usage error: exit 1,
    /// `Error: …`, and no usage text.
    @Test func aRuntimeRefusalExitsOneWithoutTheUsage() async throws {
        try await TestDatabase.withFresh { db in
            for (arguments, message) in [
                (["webhooks", "remove", "https://nobody.example.com/hook"], "no active endpoint"),
                (["api-key", "revoke", "nobody"], "no unrevoked key named nobody"),
                (["requeue", "999999", "--reason", "fixed"], "none of the 1 named event(s) was requeued"),
                (["reconcile", "--hours", "2"], "reconciliation needs the App Store Server API"),
            ] {
                let run = try await Self.run(arguments, databaseURL: db.url.connectionString)
                #expect(run.status == 1, "\(arguments): \(run.output)")
                #expect(run.output.contains(message), "\(arguments): \(run.output)")
                #expect(!run.output.contains("USAGE"), "\(arguments): \(run.output)")
            }
        }
    }
}
