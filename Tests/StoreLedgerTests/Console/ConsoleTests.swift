import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import Prometheus
import StoreLedgerCore
import StoreLedgerCoreTestSupport
import StoreLedgerHTTP
import StoreLedgerProcessing
import StoreLedgerSimulation
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

@testable import StoreLedgerWorker

@Suite("Console: sign-in, sessions, CSRF, roles and security headers")
struct ConsoleTests {
    static let pki = try! TestPKI()
    static let adminKey = "admin-key-for-console-tests"

    /// Runs `body` against the admin router with the console on, over a fresh database with users `alice`
    /// (operator) and `victor` (viewer), both with password `correct horse`.
    func withConsole(
        _ configuration: ConsoleConfiguration = ConsoleConfiguration(enabled: true, sessionHours: 12, adminAPIKey: ConsoleTests.adminKey),
        signIns: ClientRateLimiter? = nil, trustedProxies: [IPAddressRange]? = nil,
        _ body: @Sendable @escaping (TestDatabase, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await TestDatabase.withFresh { db in
            let users = ConsoleUserStore(client: db.client)
            #expect(
                try await users.create(
                    name: "alice", role: .operator, passwordHash: try ConsolePassword.hash("correct horse", rounds: 1_000), logger: db.logger))
            #expect(
                try await users.create(
                    name: "victor", role: .viewer, passwordHash: try ConsolePassword.hash("correct horse", rounds: 1_000), logger: db.logger))
            var console = try ConsoleController(configuration: configuration, client: db.client)
            if let signIns { console.signIns = signIns }
            if let trustedProxies { console.clientAddresses = ClientAddressResolver(trustedProxies: trustedProxies) }
            let router = AdminApplication.router(
                registry: PrometheusCollectorRegistry(), client: db.client, migrator: Migrator(migrations: try Migration.bundled()), console: console
            )
            // Over a real socket when proxies are trusted: the peer address is what they are trusted by.
            try await Application(router: router).test(trustedProxies == nil ? .router : .live) { client in try await body(db, client) }
        }
    }

    /// One rejected event (a notification signed by an untrusted CA) and one done lifecycle; returns the rejected id.
    func seedRejected(_ db: TestDatabase) async throws -> Int64 {
        let pipeline = try LedgerPipeline(db, pki: Self.pki)
        let forged = TestSigner(pki: try TestPKI(), bundleID: "com.example.app")
        let id = try await pipeline.append(
            source: .appleNotification, body: #"{"signedPayload":"\#(try forged.signedNotification(type: "TEST"))"}"#
        )
        try await pipeline.drain()
        return id.rawValue
    }

    static let pages = [
        "/console", "/console/customers", "/console/customers?q=1000", "/console/customers/1000", "/console/queue",
        "/console/events/1", "/console/webhooks", "/console/charts", "/console/charts/mrr.csv", "/console/nowhere",
    ]

    @Test func withTheConsoleOffEveryConsolePathIsA404AndThePublicPortNeverServesIt() async throws {
        try await TestDatabase.withFresh { db in
            let migrator = Migrator(migrations: try Migration.bundled())
            let admin = Application(router: AdminApplication.router(registry: PrometheusCollectorRegistry(), client: db.client, migrator: migrator))
            try await admin.test(.router) { client in
                for path in Self.pages + ["/console/login", "/console/assets/console.css"] {
                    let response = try await client.execute(uri: path, method: .get)
                    #expect(response.status == .notFound, "\(path)")
                }
                let post = try await client.execute(uri: "/console/login", method: .post)
                #expect(post.status == .notFound)
                let health = try await client.execute(uri: "/healthz", method: .get)
                #expect(health.status == .ok)
            }
            let publicApp = Application(router: buildReceiverRouter(client: db.client, migrator: migrator, configuration: .init(port: 0)))
            try await publicApp.test(.router) { client in
                for path in Self.pages + ["/console/login"] {
                    let response = try await client.execute(uri: path, method: .get)
                    #expect(response.status == .notFound, "\(path)")
                }
            }
        }
        // Off is the default, and the settings are read strictly.
        #expect(try ConsoleConfiguration(reading: { _ in nil }).enabled == false)
        #expect(try ConsoleConfiguration(reading: { $0 == "CONSOLE" ? "on" : nil }).enabled)
        #expect(try ConsoleConfiguration(reading: { $0 == "CONSOLE" ? "on" : $0 == "CONSOLE_SESSION_HOURS" ? "2" : nil }).sessionLifetime == 7_200)
        #expect(throws: ConsoleError.self) { try ConsoleConfiguration(reading: { $0 == "CONSOLE" ? "maybe" : nil }) }
        #expect(throws: ConsoleError.self) { try ConsoleConfiguration(reading: { $0 == "CONSOLE_SESSION_HOURS" ? "0" : nil }) }
    }

    @Test func withoutASessionEveryPageRedirectsToTheSignInPage() async throws {
        try await withConsole { _, client in
            let browser = ConsoleBrowser(client)
            for path in Self.pages {
                let response = try await browser.get(path)
                #expect(response.status == .seeOther, "\(path)")
                #expect(response.location == "/console/login", "\(path)")
            }
            for path in ["/console/events/1/requeue", "/console/events/1/replay", "/console/logout"] {
                let response = try await browser.post(path, [("reason", "x")])
                #expect(response.status == .seeOther, "\(path)")
                #expect(response.location == "/console/login", "\(path)")
            }
            let login = try await browser.get("/console/login")
            #expect(login.status == .ok)
            #expect(login.headers[.contentType] == "text/html; charset=utf-8")
            for needle in [
                #"<form id="login-form" method="post" action="/console/login">"#, #"name="username""#, #"name="password""#,
                #"<form id="api-key-form" method="post" action="/console/login">"#, #"name="api_key""#, #"type="submit""#,
                #"<main id="content">"#,
            ] {
                #expect(login.html.contains(needle), "\(needle)")
            }
            #expect(!login.html.contains("login-error"))
        }
    }

    @Test func signingInSetsAStrictHttpOnlySessionCookieStoredOnlyAsADigest() async throws {
        try await withConsole { db, client in
            let browser = ConsoleBrowser(client)
            let response = try await browser.signIn("alice", "correct horse")
            #expect(response.status == .seeOther)
            #expect(response.location == "/console/customers")
            let line = try #require(browser.setCookies.last { $0.hasPrefix("storeledger_console=") })
            #expect(line.contains("HttpOnly"))
            #expect(line.contains("SameSite=Strict"))
            #expect(line.contains("Path=/console"))
            #expect(line.contains("Max-Age=43200"))
            let token = try #require(browser.cookies["storeledger_console"])
            #expect(token.count == 43)
            // The table holds the token's SHA-256, never the token.
            let digest = Data(SHA256.hash(data: Data(token.utf8)))
            #expect(
                try await db.scalar(
                    "SELECT count(*) FROM console_sessions WHERE token_sha256 = \(digest) AND principal = 'alice' AND role = 'operator'") == 1)
            #expect(try await db.scalar("SELECT count(*) FROM console_sessions WHERE position(\(token) IN encode(token_sha256, 'escape')) > 0") == 0)
            #expect(
                try await db.scalar(
                    "SELECT count(*) FROM console_sessions WHERE expires_at BETWEEN now() + interval '11 hours 59 minutes' AND now() + interval '12 hours 1 minute'"
                ) == 1)

            let page = try await browser.get("/console/customers")
            #expect(page.status == .ok)
            for needle in [
                #"<nav id="console-nav""#, #"href="/console/customers""#, #"href="/console/queue""#, #"href="/console/webhooks""#,
                #"href="/console/charts""#, #"<form id="logout-form" method="post" action="/console/logout">"#, #"<main id="content">"#,
                #"<form id="customer-search""#, #"name="q""#,
            ] {
                #expect(page.html.contains(needle), "\(needle)")
            }
            let signedInAs = try #require(
                page.html.range(of: #"<span id="signed-in-as">[^\n]*"#, options: .regularExpression).map { String(page.html[$0]) })
            #expect(signedInAs.contains("alice") && signedInAs.contains("operator"))
            // The logout form carries the session's CSRF token; without it the session survives.
            let csrf = try #require(ConsoleBrowser.csrf(in: page))
            #expect(try await browser.post("/console/logout", []).status == .forbidden)
            #expect(try await browser.get("/console/customers").status == .ok)
            let out = try await browser.post("/console/logout", [("csrf_token", csrf)])
            #expect(out.status == .seeOther)
            #expect(out.location == "/console/login")
            #expect(browser.cookies["storeledger_console"] == nil)
            #expect(try await db.scalar("SELECT count(*) FROM console_sessions") == 0)
            // The old token no longer opens anything.
            let replayed = try await client.execute(uri: "/console/queue", method: .get, headers: [.cookie: "storeledger_console=\(token)"])
            #expect(replayed.status == .seeOther)
        }
    }

    @Test func aWrongPasswordAnUnknownUserOrNoCSRFTokenSignsNobodyIn() async throws {
        try await withConsole { db, client in
            let browser = ConsoleBrowser(client)
            for (name, password) in [("alice", "wrong"), ("mallory", "correct horse"), ("alice", ""), ("<script>alert(1)</script>", "x")] {
                let response = try await browser.signIn(name, password)
                #expect(response.status == .unauthorized, "\(name)")
                #expect(response.html.contains(#"id="login-error""#))
                #expect(response.html.contains("Wrong name or password."))
                #expect(!response.html.contains("<script>alert(1)</script>"))
                #expect(browser.cookies["storeledger_console"] == nil)
            }
            // The name typed is echoed in the form's value="…": a quote followed by a combining mark (one Swift
            // Character, still a quote to the browser) is escaped too, and cannot end the attribute.
            // (The strings are named: #expect would quote their source text, combining mark and all.)
            let quoteWithAccent = "\"\u{301}"
            let escaped = "x&quot;\u{301} autofocus"
            let sneaky = try await browser.signIn("x" + quoteWithAccent + " autofocus onfocus=alert(1) y", "x")
            #expect(sneaky.html.contains(escaped))
            #expect(!sneaky.html.contains(quoteWithAccent))
            // The sign-in form's CSRF token: missing or wrong is a 403.
            _ = try await browser.get("/console/login")
            #expect(try await browser.post("/console/login", [("username", "alice"), ("password", "correct horse")]).status == .forbidden)
            #expect(
                try await browser.post("/console/login", [("csrf_token", "forged"), ("username", "alice"), ("password", "correct horse")]).status
                    == .forbidden)
            #expect(try await db.scalar("SELECT count(*) FROM console_sessions") == 0)
            // A token from another browser's sign-in page does not work either.
            let other = ConsoleBrowser(client)
            let otherToken = try #require(ConsoleBrowser.csrf(in: try await other.get("/console/login")))
            #expect(
                try await browser.post("/console/login", [("csrf_token", otherToken), ("username", "alice"), ("password", "correct horse")]).status
                    == .forbidden)
        }
    }

    /// Each sign-in hashes a password 600,000 times: past the attempts allowed per address, the answer is 429 with
    /// `Retry-After`, the right password included, until the allowance refills.
    @Test func signInAttemptsPastTheAllowanceAre429() async throws {
        try await withConsole(signIns: ClientRateLimiter(perClient: 3, total: 100)) { _, client in
            let browser = ConsoleBrowser(client)
            for _ in 0..<3 {
                let wrong = try await browser.signIn("alice", "wrong horse")
                #expect(wrong.status == .unauthorized)
            }
            let limited = try await browser.signIn("alice", "correct horse")
            #expect(limited.status == .tooManyRequests)
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            #expect(limited.html.contains("Too many sign-in attempts"))
            #expect(browser.cookies["storeledger_console"] == nil)
        }
    }

    /// Behind a trusted proxy each forwarded client has its own allowance: one guessing does not lock out the others.
    @Test func behindATrustedProxyEachForwardedClientHasItsOwnSignInAllowance() async throws {
        let loopback = try #require(IPAddressRange("127.0.0.1/32"))
        try await withConsole(signIns: ClientRateLimiter(perClient: 2, total: 100), trustedProxies: [loopback]) { _, client in
            /// A sign-in with `password` through the proxy for the client at `address`.
            func signIn(from address: String, _ password: String) async throws -> HTTPResponse.Status {
                let page = try await client.execute(uri: "/console/login", method: .get)
                let cookie = try #require(page.headers[.setCookie]?.split(separator: ";").first.map(String.init))
                let csrf = try #require(ConsoleBrowser.csrf(in: page))
                return try await client.execute(
                    uri: "/console/login", method: .post,
                    headers: [.cookie: cookie, .contentType: "application/x-www-form-urlencoded", HTTPField.Name("X-Forwarded-For")!: address],
                    body: ByteBuffer(string: "csrf_token=\(csrf)&username=alice&password=\(password)")
                ).status
            }
            var answers: [HTTPResponse.Status] = []
            for (address, password) in [
                ("203.0.113.1", "wrong"), ("203.0.113.1", "wrong"), ("203.0.113.1", "correct+horse"), ("203.0.113.2", "correct+horse"),
            ] {
                answers.append(try await signIn(from: address, password))
            }
            #expect(answers == [.unauthorized, .unauthorized, .tooManyRequests, .seeOther])
        }
    }

    @Test func theProductionPasswordHashIsSaltedAndSlowAndVerifies() throws {
        let first = try ConsolePassword.hash("correct horse")
        let second = try ConsolePassword.hash("correct horse")
        #expect(first.hasPrefix("pbkdf2-sha256$600000$"))
        #expect(first != second)
        #expect(!first.contains("correct horse"))
        #expect(ConsolePassword.verify("correct horse", against: first))
        #expect(!ConsolePassword.verify("correct horsf", against: first))
        #expect(!ConsolePassword.verify("correct horse", against: "plain"))
        #expect(throws: ConsoleError.self) { try ConsolePassword.hash("") }
    }

    /// User names are plain, and none is a principal an API key's session has (`admin-api-key`, `api-key:NAME`).
    @Test func userNamesCannotBeAKeysPrincipal() {
        for name in ["victor", "ops.team@example", "a-b_c"] { #expect(ConsoleUserStore.isValidName(name), "\(name)") }
        for name in ["", "admin-api-key", "Admin-API-Key", "api-key:oncall", "two words", String(repeating: "a", count: 65)] {
            #expect(!ConsoleUserStore.isValidName(name), "\(name)")
        }
    }

    @Test func anAPIKeySignsInAsAViewerUnlessItWasCreatedForOperators() async throws {
        try await withConsole { db, client in
            let keys = APIKeyStore(client: db.client)
            let viewerKey = try #require(try await keys.create(name: "support-bot", logger: db.logger))
            let operatorKey = try #require(try await keys.create(name: "oncall", consoleRole: .operator, logger: db.logger))
            for (key, expected) in [(Self.adminKey, "admin-api-key"), (viewerKey, "api-key:support-bot"), (operatorKey, "api-key:oncall")] {
                let browser = ConsoleBrowser(client)
                #expect(try await browser.signIn(apiKey: key).status == .seeOther, "\(expected)")
                let home = try await browser.get("/console/customers")
                #expect(home.html.contains(expected))
                #expect(home.html.contains(key == operatorKey ? ">operator<" : ">viewer<"))
            }
            // A session the revoked key opened ends with it; the other key's goes on.
            let operatorSession = ConsoleBrowser(client)
            try await operatorSession.signIn(apiKey: operatorKey)
            let viewerSession = ConsoleBrowser(client)
            try await viewerSession.signIn(apiKey: viewerKey)
            #expect(try await operatorSession.get("/console/queue").status == .ok)
            #expect(try await keys.revoke(name: "oncall", logger: db.logger))
            #expect(try await operatorSession.get("/console/queue").location == "/console/login")
            #expect(try await viewerSession.get("/console/queue").status == .ok)
            // A session whose key was revoked without it (a sign-in racing the revocation, an earlier version) is refused.
            try await db.client.query("UPDATE api_keys SET revoked_at = now() WHERE name = 'support-bot'", logger: db.logger)
            #expect(try await viewerSession.get("/console/queue").location == "/console/login")
            let refused = try await ConsoleBrowser(client).signIn(apiKey: operatorKey)
            #expect(refused.status == .unauthorized)
            #expect(refused.html.contains(#"id="login-error""#))
        }
    }

    /// A session the admin key opened lives only while the process's `ADMIN_API_KEY` is that key: rotating a leaked
    /// key (or removing it) ends the sessions it opened, as revoking an API key does.
    @Test func anAdminKeySessionEndsWhenTheKeyChanges() async throws {
        try await TestDatabase.withFresh { db in
            let sessions = ConsoleSessionStore(client: db.client)
            let old = ConsoleUserStore.adminKeyPrincipal(for: "the-old-admin-key")
            try await sessions.create(token: "t-admin", principal: old, role: .viewer, lifetime: 3600, logger: db.logger)
            #expect(try await sessions.session(token: "t-admin", adminKeyPrincipal: old, logger: db.logger) != nil)
            let rotated = ConsoleUserStore.adminKeyPrincipal(for: "the-new-admin-key")
            #expect(rotated != old && rotated.hasPrefix("admin-api-key:"))
            #expect(try await sessions.session(token: "t-admin", adminKeyPrincipal: rotated, logger: db.logger) == nil)
            #expect(try await sessions.session(token: "t-admin", adminKeyPrincipal: nil, logger: db.logger) == nil)
            // A user's session does not depend on the admin key, whatever the name starts with.
            for (index, name) in ["victor", "admin-api-keys", "admin-api-key-ops"].enumerated() {
                #expect(ConsoleUserStore.isValidName(name))
                try await sessions.create(token: "t-user-\(index)", principal: name, role: .viewer, lifetime: 3600, logger: db.logger)
                #expect(try await sessions.session(token: "t-user-\(index)", adminKeyPrincipal: nil, logger: db.logger) != nil, "\(name)")
                #expect(try await sessions.session(token: "t-user-\(index)", adminKeyPrincipal: rotated, logger: db.logger) != nil, "\(name)")
            }
        }
    }

    /// A sign-in checks its password for hundreds of milliseconds; a `console-user delete` or `--replace` (ending the
    /// user's sessions) that runs meanwhile must not be outlived by the session the sign-in then records: it is
    /// recorded only while the user still has the hash and role that were checked.
    @Test func aSignInRacingAPasswordOrRoleChangeGetsNoSession() async throws {
        try await TestDatabase.withFresh { db in
            let users = ConsoleUserStore(client: db.client)
            let sessions = ConsoleSessionStore(client: db.client)
            let old = try ConsolePassword.hash("leaked", rounds: 1_000)
            #expect(try await users.create(name: "olga", role: .operator, passwordHash: old, logger: db.logger))
            // The sign-in read olga's credentials and verified "leaked"; meanwhile the password was replaced.
            #expect(
                try await users.create(
                    name: "olga", role: .operator, passwordHash: try ConsolePassword.hash("new", rounds: 1_000), replace: true, logger: db.logger))
            #expect(
                try await sessions.create(
                    token: "t-1", principal: "olga", role: .operator, lifetime: 3600, verifiedPasswordHash: old, logger: db.logger) == false)
            #expect(try await sessions.session(token: "t-1", logger: db.logger) == nil)
            // The role lowered meanwhile: no operator session either.
            let current = try #require(try await users.credentials(of: "olga", logger: db.logger))
            #expect(try await users.create(name: "olga", role: .viewer, passwordHash: current.passwordHash, replace: true, logger: db.logger))
            #expect(
                try await sessions.create(
                    token: "t-2", principal: "olga", role: .operator, lifetime: 3600, verifiedPasswordHash: current.passwordHash, logger: db.logger)
                    == false)
            // Unchanged: recorded.
            #expect(
                try await sessions.create(
                    token: "t-3", principal: "olga", role: .viewer, lifetime: 3600, verifiedPasswordHash: current.passwordHash, logger: db.logger))
            #expect(try await sessions.session(token: "t-3", logger: db.logger)?.role == .viewer)
        }
    }

    /// The same race at the commit: a replace that changed the user's row (and deleted its sessions) but has not
    /// committed yet. The session's insert waits for it, then finds the row changed and records nothing; read from its
    /// snapshot instead, the old hash would match and the session would outlive the replace.
    @Test func aSignInWaitsForAReplaceInFlightAndThenGetsNoSession() async throws {
        try await TestDatabase.withFresh(maximumConnections: 4) { db in
            let users = ConsoleUserStore(client: db.client)
            let sessions = ConsoleSessionStore(client: db.client)
            let old = try ConsolePassword.hash("leaked", rounds: 1_000)
            #expect(try await users.create(name: "olga", role: .operator, passwordHash: old, logger: db.logger))
            let new = try ConsolePassword.hash("new", rounds: 1_000)
            try await TestDatabase.withClient(db.url, maximumConnections: 1) { replacer in
                try await replacer.withConnection { connection in
                    try await connection.query("BEGIN", logger: db.logger).readToEnd()
                    try await connection.query(
                        "UPDATE console_users SET password_hash = \(new) WHERE name = 'olga'", logger: db.logger
                    ).readToEnd()
                    try await connection.query("DELETE FROM console_sessions WHERE principal = 'olga'", logger: db.logger).readToEnd()
                    let signIn = Task {
                        try await sessions.create(
                            token: "t-race", principal: "olga", role: .operator, lifetime: 3600, verifiedPasswordHash: old, logger: db.logger)
                    }
                    try await Task.sleep(for: .milliseconds(300))
                    try await connection.query("COMMIT", logger: db.logger).readToEnd()
                    #expect(try await signIn.value == false)
                }
            }
            #expect(try await sessions.session(token: "t-race", logger: db.logger) == nil)
        }
    }

    @Test func anExpiredSessionOrADeletedUserIsSignedOut() async throws {
        try await withConsole { db, client in
            let browser = ConsoleBrowser(client)
            try await browser.signIn("victor", "correct horse")
            #expect(try await browser.get("/console/queue").status == .ok)
            try await db.client.query("UPDATE console_sessions SET expires_at = now() - interval '1 second'", logger: db.logger)
            #expect(try await browser.get("/console/queue").location == "/console/login")

            try await browser.signIn("victor", "correct horse")
            #expect(try await browser.get("/console/queue").status == .ok)
            #expect(try await ConsoleUserStore(client: db.client).delete(name: "victor", logger: db.logger))
            #expect(try await browser.get("/console/queue").location == "/console/login")
        }
    }

    /// A notification a worker marked done with the envelope handler (which only reads the envelope) is not shown as
    /// verified: nothing of it was verified or recorded.
    @Test func aNotificationDoneByTheEnvelopeHandlerIsNotShownAsVerified() async throws {
        try await withConsole { db, client in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            let id = try await pipeline.append(
                source: .appleNotification, body: #"{"signedPayload":"\#(try pipeline.signer.signedNotification(type: "TEST"))"}"#)
            let queue = EventQueue(client: db.client)
            let batch = try await queue.claim(limit: 10, owner: "w#0", lease: .seconds(30), logger: db.logger)
            await WorkerService(client: db.client, handler: EnvelopeHandler(), configuration: WorkerConfiguration(), logger: db.logger)
                .process(batch, owner: "w#0")
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE event_id = \(id.rawValue) AND state = 'done'") == 1)
            let browser = ConsoleBrowser(client)
            try await browser.signIn("victor", "correct horse")
            let page = try await browser.get("/console/events/\(id.rawValue)")
            #expect(page.html.contains(#"<span class="badge warn">done, not verified</span>"#), "\(page.html)")
            #expect(!page.html.contains("verified and recorded"))
        }
    }

    @Test func aViewerSeesNoFormsAndItsPostsAre403AndChangeNothing() async throws {
        try await withConsole { db, client in
            let rejected = try await seedRejected(db)
            let browser = ConsoleBrowser(client)
            try await browser.signIn("victor", "correct horse")
            let page = try await browser.get("/console/events/\(rejected)")
            #expect(page.status == .ok)
            #expect(!page.html.contains("requeue-form"))
            #expect(!page.html.contains("replay-form"))
            // Forged with the viewer's own valid CSRF token.
            let csrf = try #require(ConsoleBrowser.csrf(in: page))
            for action in ["requeue", "replay"] {
                let response = try await browser.post("/console/events/\(rejected)/\(action)", [("csrf_token", csrf), ("reason", "let me")])
                #expect(response.status == .forbidden)
            }
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE event_id = \(rejected) AND state = 'rejected'") == 1)
            #expect(try await db.scalar("SELECT count(*) FROM operator_actions") == 0)
            // A link that claims a success nobody performed shows none.
            for flash in ["requeued", "replayed"] {
                let forged = try await browser.get("/console/events/\(rejected)?flash=\(flash)")
                #expect(!forged.html.contains(#"id="flash""#), "\(flash)")
            }
        }
    }

    @Test func anOperatorRequeuesAndReplaysWithAReasonRecordedLikeTheCLI() async throws {
        try await withConsole { db, client in
            let rejected = try await seedRejected(db)
            let browser = ConsoleBrowser(client)
            try await browser.signIn("alice", "correct horse")
            let page = try await browser.get("/console/events/\(rejected)")
            #expect(page.html.contains(#"<dd id="event-state">rejected</dd>"#))
            for needle in [
                #"<form id="requeue-form" class="card" method="post" action="/console/events/\#(rejected)/requeue">"#,
                #"<form id="replay-form" class="card" method="post" action="/console/events/\#(rejected)/replay">"#,
                #"<textarea id="requeue-reason" name="reason" required"#, #"<pre id="raw-body">"#, #"id="verification""#,
                #"id="decoded""#, #"id="attempts""#, #"id="audit""#,
            ] {
                #expect(page.html.contains(needle), "\(needle)")
            }
            #expect(page.html.contains("untrustedChain"))
            let csrf = try #require(ConsoleBrowser.csrf(in: page))
            // No token, a wrong token, no reason: nothing happens.
            #expect(try await browser.post("/console/events/\(rejected)/requeue", [("reason", "retry")]).status == .forbidden)
            #expect(
                try await browser.post("/console/events/\(rejected)/requeue", [("csrf_token", csrf + "x"), ("reason", "retry")]).status == .forbidden)
            let empty = try await browser.post("/console/events/\(rejected)/requeue", [("csrf_token", csrf), ("reason", "  ")])
            #expect(empty.status == .badRequest)
            #expect(empty.html.contains(#"id="form-error""#))
            #expect(try await db.scalar("SELECT count(*) FROM operator_actions") == 0)

            let reason = "CA rotated <script>alert('x')</script>"
            let done = try await browser.post("/console/events/\(rejected)/requeue", [("csrf_token", csrf), ("reason", reason)])
            #expect(done.status == .seeOther)
            #expect(done.location == "/console/events/\(rejected)?flash=requeued")
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE event_id = \(rejected) AND state = 'pending'") == 1)
            #expect(
                try await db.scalar(
                    "SELECT count(*) FROM operator_actions WHERE event_id = \(rejected) AND action = 'requeue' AND requested_by = 'console:alice' AND reason = \(reason) AND previous_state = 'rejected'"
                ) == 1)
            let after = try await browser.get(done.location ?? "")
            let flash = try #require(after.html.range(of: #"<p id="flash"[^\n]*"#, options: .regularExpression).map { String(after.html[$0]) })
            #expect(flash.contains("requeued"))
            #expect(after.html.contains(#"<tr class="audit-entry">"#))
            #expect(after.html.contains("console:alice"))
            #expect(after.html.contains("CA rotated &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"))
            #expect(!after.html.contains("<script>alert"))
            // Pending now: a second requeue changes nothing and says so.
            let again = try await browser.post("/console/events/\(rejected)/requeue", [("csrf_token", csrf), ("reason", "again")])
            #expect(again.location == "/console/events/\(rejected)?flash=unchanged")
            #expect(try await db.scalar("SELECT count(*) FROM operator_actions") == 1)

            // Replay a done event: recorded as a replay, as `storeledger replay` records it.
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            try await pipeline.append(SubscriptionLifecycles.renewThenExpire().facts)
            try await pipeline.drain()
            let doneEvent = Int64(try await db.scalar("SELECT min(event_id) FROM event_queue WHERE state = 'done'"))
            let replay = try await browser.post("/console/events/\(doneEvent)/replay", [("csrf_token", csrf), ("reason", "new handler")])
            #expect(replay.location == "/console/events/\(doneEvent)?flash=replayed")
            #expect(
                try await db.scalar(
                    "SELECT count(*) FROM operator_actions WHERE event_id = \(doneEvent) AND action = 'replay' AND requested_by = 'console:alice' AND reason = 'new handler'"
                ) == 1)
            #expect((try await browser.get(replay.location ?? "")).html.contains("replayed"))
        }
    }

    @Test func everyConsoleResponseCarriesTheStrictSecurityHeaders() async throws {
        try await withConsole { db, client in
            let rejected = try await seedRejected(db)
            let anonymous = ConsoleBrowser(client)
            var responses: [(String, TestResponse)] = []
            for path in Self.pages + ["/console/login", "/console/assets/console.css"] { responses.append((path, try await anonymous.get(path))) }
            responses.append(("POST /console/login without token", try await anonymous.post("/console/login", [("username", "alice")])))
            let browser = ConsoleBrowser(client)
            try await browser.signIn("alice", "correct horse")
            for path in Self.pages + ["/console/events/\(rejected)", "/console/events/999999", "/console/login"] {
                responses.append(("signed in \(path)", try await browser.get(path)))
            }
            responses.append(("forbidden", try await browser.post("/console/events/\(rejected)/requeue", [("reason", "x")])))
            responses.append(("PUT", try await browser.send("/console/queue", method: .put, body: nil)))
            for (name, response) in responses {
                let policy = try #require(response.headers[.contentSecurityPolicy], "\(name)")
                for directive in [
                    "default-src 'none'", "style-src 'self'", "script-src 'self'", "img-src 'self'", "form-action 'self'", "frame-ancestors 'none'",
                ] {
                    #expect(policy.contains(directive), "\(name): \(directive)")
                }
                #expect(!policy.contains("unsafe"), "\(name)")
                #expect(response.headers[.xContentTypeOptions] == "nosniff", "\(name)")
                #expect(response.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer", "\(name)")
            }
            // Pages load nothing from elsewhere and carry no inline script or style.
            for (name, response) in responses where response.headers[.contentType]?.hasPrefix("text/html") == true {
                let html = response.html
                #expect(!html.contains("http://") || html.contains("xmlns=\"http://www.w3.org/2000/svg\""), "\(name)")
                #expect(!html.contains("https://"), "\(name)")
                #expect(!html.contains("<script"), "\(name)")
                #expect(!html.contains("style=\""), "\(name)")
            }
            // The metrics and health routes are unaffected.
            #expect(try await client.execute(uri: "/healthz", method: .get).headers[.contentSecurityPolicy] == nil)
        }
    }
}
