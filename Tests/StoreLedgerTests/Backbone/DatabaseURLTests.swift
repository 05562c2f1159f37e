import StoreLedgerStore
import Testing

@Suite("DATABASE_URL parsing")
struct DatabaseURLTests {
    @Test func herokuStyleURL() throws {
        let url = try DatabaseURL("postgres://alice:s%40cret@db.example.com:6543/ledger?sslmode=require")
        #expect(url.host == "db.example.com")
        #expect(url.port == 6543)
        #expect(url.username == "alice")
        #expect(url.password == "s@cret")
        #expect(url.database == "ledger")
        #expect(url.sslMode == .require)
        #expect(url.unixSocketPath == nil)
        #expect(!url.description.contains("s@cret"))
    }

    @Test func defaultsToPreferAndPort5432() throws {
        let url = try DatabaseURL("postgresql://bob@localhost/app")
        #expect(url.port == 5432)
        #expect(url.sslMode == .prefer)
        #expect(url.password == nil)
    }

    @Test func unixSocketFolderBecomesTheSocketFile() throws {
        let url = try DatabaseURL("postgresql:///ledger?host=/var/run/postgresql&port=5433&user=x")
        #expect(url.unixSocketPath == "/var/run/postgresql/.s.PGSQL.5433")
        #expect(url.host == nil)
    }

    /// `dev` runs only against a database on this machine: a unix socket or a loopback host, never a name that merely
    /// starts like one.
    @Test func whetherTheServerIsOnThisMachine() throws {
        for local in [
            "postgresql:///ledger?host=/var/run/postgresql", "postgres://x@localhost/a", "postgres://x@LOCALHOST:5433/a",
            "postgres://x@127.0.0.1/a", "postgres://x@127.1.2.3/a", "postgres://x@[::1]:5432/a",
        ] {
            #expect(try DatabaseURL(local).isOnThisMachine, "\(local)")
        }
        for remote in [
            "postgres://x@db.example.com/a", "postgres://x@10.0.0.5/a", "postgres://x@127.example.com/a", "postgres://x@127.0.0/a",
            "postgres://x@[2001:db8::1]/a", "postgres://x@localhost.example.com/a",
        ] {
            #expect(try !DatabaseURL(remote).isOnThisMachine, "\(remote)")
        }
    }

    @Test(arguments: ["mysql://x@y/z", "not a url", "postgres://x@y:99999/z", "postgres://x@y/z?sslmode=sometimes"])
    func rejectsWithAClearError(_ text: String) {
        #expect(throws: StoreError.self) { try DatabaseURL(text) }
    }
}
