import PostgresNIO
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// What an operator command prints for a database error: PostgresNIO's own description of a `PSQLError` is generic
/// ("Generic description to prevent accidental leakage…"), which told an operator neither what the server said nor,
/// after a lost connection, that the command's change may have been made.
@Suite("Operator commands: database errors said plainly")
struct OperatorErrorMessageTests {
    @Test func aRefusalCarriesTheServersMessageAndALostSessionSaysTheOutcomeIsUnknown() async throws {
        try await TestDatabase.withFresh { db in
            let refused = await #expect(throws: PSQLError.self) { try await db.client.query("SELECT 1/0", logger: db.logger).readToEnd() }
            let refusal = try #require(refused?.operatorMessage)
            #expect(refusal.contains("division by zero") && refusal.contains("refused"), "\(refusal)")
            #expect(!refusal.contains("Generic description"), "\(refusal)")

            // A session the server ends (as a crash or a failover would, perhaps after the COMMIT).
            try await TestDatabase.withClient(db.url, maximumConnections: 1) { client in
                let ended = await #expect(throws: PSQLError.self) {
                    try await client.query("SELECT pg_terminate_backend(pg_backend_pid())", logger: db.logger).readToEnd()
                }
                let lost = try #require(ended?.operatorMessage)
                #expect(lost.contains("is not known"), "\(lost)")
                #expect(!lost.contains("Generic description"), "\(lost)")
            }
        }
    }
}
