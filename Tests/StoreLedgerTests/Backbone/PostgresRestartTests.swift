import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import StoreLedgerHTTP
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

@Suite("Receiver across a Postgres restart")
struct PostgresRestartTests {
    @Test func answers503WhilePostgresIsDownAnd200AgainAfterItRestarts() async throws {
        try await ThrowawayCluster.withRunning { cluster in try await exercise(cluster) }
    }

    func exercise(_ cluster: ThrowawayCluster) async throws {
        let logger = TestDatabase.makeLogger()
        let migrator = Migrator(migrations: try Migration.bundled())
        let body = ByteBuffer(string: #"{"signedPayload":"x.y.z"}"#)
        try await TestDatabase.withClient(cluster.url, maximumConnections: 4) { client in
            try await migrator.migrate(client: client, logger: logger)
            let configuration = ReceiverConfiguration(port: 0, storeTimeout: .seconds(2))
            let app = Application(router: buildReceiverRouter(client: client, migrator: migrator, configuration: configuration))
            try await app.test(.live) { http in
                // The first append opens the pool's first connection on a cluster just started: on a machine busy with the
                // rest of the suite that can outlast the 2 s store timeout, so it is asked until it answers (bounded).
                let firstStored = try await eventually {
                    try await http.execute(uri: "/notifications/apple", method: .post, body: body) { $0.status == .ok }
                }
                #expect(firstStored)

                try await cluster.stop()
                try await http.execute(uri: "/notifications/apple", method: .post, body: body) { response in
                    #expect(response.status == .serviceUnavailable)
                }
                try await http.execute(uri: "/readyz", method: .get) { #expect($0.status == .serviceUnavailable) }

                try await cluster.restart()
                // The same process, no restart: the pool reconnects on its own.
                var status: HTTPResponse.Status = .serviceUnavailable
                for _ in 0..<40 where status != .ok {
                    try await http.execute(uri: "/notifications/apple", method: .post, body: body) { status = $0.status }
                    if status != .ok { try await Task.sleep(for: .milliseconds(250)) }
                }
                #expect(status == .ok)
            }
            let rows = try await client.query("SELECT count(*) FROM events", logger: logger)
            var stored = 0
            for try await count in rows.decode(Int.self) { stored = count }
            // Both acknowledged notifications are stored. (A request answered 503 may still have
            // committed late; that is a harmless duplicate delivery, never a loss.)
            #expect(stored >= 2)
        }
    }
}
