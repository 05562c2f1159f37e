import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PostgresNIO
import StoreLedgerCore
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// The web console in a real headless Chromium (Debian's `chromium` + `chromium-driver`, driven by Selenium from
/// `.local/venv`; `scripts/browser` installs them and `scripts/test` runs it first).
///
/// The test sets up a ledger as an operator would have one: a fresh database, real `storeledger serve` (CONSOLE=on,
/// the console on its loopback admin port) and `storeledger work` processes, console users made with
/// `storeledger console-user create`, a subscription's life played by `storeledger simulate`, more simulated
/// subscriptions for the charts, and two notifications the worker rejects. Once the worker has finished it is
/// stopped (a requeued event then stays `pending`, where the requeue put it), and `Tests/Browser/console_e2e.py`
/// drives Chromium through the console: login (keyboard only), the customer and its timeline, a chart with its table
/// and CSV, the queue, an operator's requeue with a reason, CSRF and a viewer's forged POST refused, logout, cookie
/// flags, CSP and no request to another origin. Afterwards the database must say what the pages said.
///
/// `STORELEDGER_SKIP_BROWSER_TESTS=1` skips it (for machines that cannot install Chromium); without it, a missing
/// browser fails the test with the command that installs it. `STORELEDGER_CONSOLE_SCREENSHOTS=DIR` also saves PNGs
/// of the main pages into DIR (relative to the repository; the README's are `docs/screenshots`).
@Suite("Console in a real browser", .serialized)
struct ConsoleBrowserTests {
    static let bundleID = "com.example.storeledger"
    static let environment = ProcessInfo.processInfo.environment
    static let skipped = environment["STORELEDGER_SKIP_BROWSER_TESTS"] == "1"
    static let root = ThrowawayCluster.repositoryRoot

    @Test(.enabled(if: !skipped, "STORELEDGER_SKIP_BROWSER_TESTS=1"), .timeLimit(.minutes(10)))
    func theConsoleWorksInARealBrowser() async throws {
        let browser = try Self.browser()
        try await TestDatabase.withFresh { db in
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("console-e2e-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: scratch) }
            let ca = scratch.appendingPathComponent("dev-ca").path

            // The development CA the simulator signs with, and a ledger that trusts it.
            let printRoot = try await CommandRun.storeledger(["simulate", "--print-root", "--ca-dir", ca])
            try #require(printRoot.status == 0, "simulate --print-root: \(printRoot.output)")
            let rootBase64 = printRoot.output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").last.map(String.init) ?? ""
            let port = try freeLoopbackPort()
            var adminPort = try freeLoopbackPort()
            while adminPort == port { adminPort = try freeLoopbackPort() }
            let apiKey = "console-e2e-" + UUID().uuidString
            let settings = [
                "DATABASE_URL": db.url.connectionString, "DATABASE_MAX_CONNECTIONS": "6", "LOG_LEVEL": "warning",
                "APPLE_ROOT_CAS_DER_BASE64": rootBase64, "APP_BUNDLE_ID": Self.bundleID, "APPLE_ENVIRONMENTS": "Sandbox",
            ]
            let serve = try StoreLedgerProcess(
                ["serve"],
                environment: settings.merging([
                    "HOST": "127.0.0.1", "PORT": "\(port)", "ADMIN_HOST": "127.0.0.1", "ADMIN_PORT": "\(adminPort)",
                    "CONSOLE": "on", "ADMIN_API_KEY": apiKey,
                ]) { $1 })
            defer { serve.cleanUp() }
            let worker = try StoreLedgerProcess(
                ["work"],
                environment: settings.merging([
                    "ADMIN_PORT": "off", "WORKER_POLL_SECONDS": "1", "WEBHOOK_MAX_ATTEMPTS": "2",
                ]) { $1 })
            defer { worker.cleanUp() }
            let base = "http://127.0.0.1:\(port)"
            let console = "http://127.0.0.1:\(adminPort)"
            let started = try await eventually(within: .seconds(30), every: .milliseconds(100)) {
                let admin = await Self.answers(console + "/healthz")
                let receiver = await Self.answers(base + "/healthz")
                return admin && receiver
            }
            try #require(started, "storeledger serve did not start:\n\(serve.output)")

            // Console users, their passwords on stdin as an operator would type them.
            let operatorUser = (name: "ana", password: "operator-" + UUID().uuidString)
            let viewerUser = (name: "vic", password: "viewer-" + UUID().uuidString)
            for (user, role) in [(operatorUser, "operator"), (viewerUser, "viewer")] {
                let created = try await CommandRun.storeledger(
                    ["console-user", "create", user.name, "--role", role], environment: settings, input: user.password + "\n")
                try #require(created.status == 0, "console-user create \(user.name): \(created.output)")
            }
            // A webhook endpoint nobody listens on: deliveries the webhooks page can show, failing.
            let hook = try await CommandRun.storeledger(
                ["webhooks", "add", "http://127.0.0.1:\(try freeLoopbackPort())/hooks/storeledger"], environment: settings)
            try #require(hook.status == 0, "webhooks add: \(hook.output)")

            // The customer: a subscription bought, renewed three times, auto-renew off, expired.
            let sandbox = base + "/notifications/apple/sandbox"
            let life = try await CommandRun.storeledger(
                ["simulate", "--url", sandbox, "--lifecycle", "renewals", "--ca-dir", ca, "--seed", "20261124"], environment: settings)
            try #require(life.status == 0, "simulate --lifecycle renewals: \(life.output)")
            let customer = try Self.simulated(life.output)
            // More customers, so the charts and the queue have something to show.
            let more = try await CommandRun.storeledger(
                [
                    "simulate", "--url", sandbox, "--random", "--subscriptions", "30", "--duration", "100", "--rate", "1000",
                    "--ca-dir", ca, "--seed", "7",
                ], environment: settings)
            try #require(more.status == 0, "simulate --random: \(more.output)")
            // Rejected: a purchase signed for an app this ledger does not serve, and a body that is no JWS at all.
            let foreign = try await CommandRun.storeledger(
                [
                    "simulate", "--url", sandbox, "--lifecycle", "one-time-purchase", "--bundle-id", "com.example.someone-else",
                    "--ca-dir", ca, "--seed", "3",
                ], environment: settings)
            try #require(foreign.status == 0, "simulate --bundle-id com.example.someone-else: \(foreign.output)")
            let garbage = try #require(await Self.post(#"{"signedPayload":"not.a.jws"}"#, to: sandbox), "the receiver refused the malformed body")

            // The user id: the customer's appAccountToken, claimed by a signed-in user as the app-facing API does.
            let userID = "user-console-e2e"
            let token = try #require(
                try await db.client.query(
                    "SELECT app_account_token FROM subscriptions WHERE original_transaction_id = \(customer.originalTransactionID)",
                    logger: db.logger
                ).decode(String?.self).firstAfterReadingAll() ?? nil, "the customer's subscription has no appAccountToken")
            _ = try await db.client.withConnection { connection in
                try await UserLinkStore.claimToken(token, for: UserID(userID), origin: "client", on: connection, logger: db.logger)
            }

            // Everything processed, then the worker stops: a requeued event stays where the requeue put it.
            let settled = try await eventually(within: .seconds(120), every: .milliseconds(200)) {
                try await db.scalar("SELECT count(*) FROM event_queue WHERE state IN ('pending', 'processing')") == 0
            }
            try #require(settled, "the worker did not finish:\n\(worker.output)")
            worker.send(SIGTERM)
            _ = await worker.waitForExit(within: .seconds(20))
            let rejected = try await db.client.query(
                "SELECT event_id FROM event_queue WHERE state = 'rejected' ORDER BY event_id", logger: db.logger
            ).decode(Int64.self).readToEnd()
            try #require(rejected.count == 2 && rejected.contains(garbage), "rejected events: \(rejected), expected \(garbage) and the foreign app's")
            let requeued = try #require(rejected.first { $0 != garbage })
            let rawBody = try #require(
                try await db.client.query(
                    "SELECT convert_from(body, 'UTF8') FROM events WHERE id = \(requeued)", logger: db.logger
                ).decode(String.self).firstAfterReadingAll())

            // Chromium, through the console.
            let reason = "browser e2e: the other app's bundle id is ours now (\(UUID().uuidString.prefix(8)))"
            let fixture: [String: Any] = [
                "base_url": console,
                "operator": ["name": operatorUser.name, "password": operatorUser.password],
                "viewer": ["name": viewerUser.name, "password": viewerUser.password],
                "api_key": apiKey,
                "customer": [
                    "original_transaction_id": customer.originalTransactionID, "app_account_token": token, "user_id": userID,
                    "entitled": false, "timeline": customer.labels,
                ],
                "requeue_event": ["id": requeued, "raw_body": rawBody, "reason": reason],
                "forge_event": ["id": garbage],
                "chromium": browser.chromium, "chromedriver": browser.chromedriver,
            ]
            let fixtureURL = scratch.appendingPathComponent("fixture.json")
            try JSONSerialization.data(withJSONObject: fixture, options: [.prettyPrinted, .sortedKeys]).write(to: fixtureURL)
            // A failure's screenshot and page source stay in .local/ (git-ignored) for whoever reads the failure.
            let artifacts = Self.root.appendingPathComponent(".local/browser-e2e")
            try? FileManager.default.removeItem(at: artifacts)
            var arguments = [
                Self.root.appendingPathComponent("Tests/Browser/console_e2e.py").path, fixtureURL.path,
                "--artifacts", artifacts.path,
            ]
            if let screenshots = Self.environment["STORELEDGER_CONSOLE_SCREENSHOTS"], !screenshots.isEmpty {
                arguments += ["--screenshots", screenshots.hasPrefix("/") ? screenshots : Self.root.appendingPathComponent(screenshots).path]
            }
            let run = try await CommandRun.run(browser.python, arguments, limit: .seconds(360))
            try #require(
                run.status == 0,
                "Tests/Browser/console_e2e.py failed (exit \(run.status)):\n\(run.output)\n--- storeledger serve ---\n\(serve.output.suffix(4000))")

            // The database agrees with what the pages said.
            let state = try await db.client.query(
                "SELECT state FROM event_queue WHERE event_id = \(requeued)", logger: db.logger
            ).decode(String.self).firstAfterReadingAll()
            #expect(state == "pending", "the requeued event is \(state ?? "missing") in the database")
            let actions = try await db.client.query(
                "SELECT event_id, action, requested_by, reason FROM operator_actions ORDER BY id", logger: db.logger
            ).decode((Int64, String, String, String).self).readToEnd()
            #expect(actions.count == 1, "operator actions: \(actions)")
            #expect(
                actions.first.map { $0.0 == requeued && $0.1 == "requeue" && $0.2 == "console:\(operatorUser.name)" && $0.3 == reason } == true,
                "the requeue was not recorded as console:\(operatorUser.name) with its reason: \(actions)")
            let forged = try await db.client.query(
                "SELECT state FROM event_queue WHERE event_id = \(garbage)", logger: db.logger
            ).decode(String.self).firstAfterReadingAll()
            #expect(forged == "rejected", "the event the viewer and the CSRF checks posted to is \(forged ?? "missing")")
            serve.send(SIGTERM)
            _ = await serve.waitForExit(within: .seconds(20))
        }
    }

    /// The installed browser, driver and Selenium's python, or a failure saying how to install them.
    static func browser() throws -> (chromium: String, chromedriver: String, python: String) {
        let chromium = ["/usr/bin/chromium", "/usr/lib/chromium/chromium"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let driver = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let python = root.appendingPathComponent(".local/venv/bin/python").path
        let selenium =
            FileManager.default.fileExists(atPath: python)
            && ((try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(".local/venv/lib").path)) ?? [])
                .contains { FileManager.default.fileExists(atPath: root.appendingPathComponent(".local/venv/lib/\($0)/site-packages/selenium").path) }
        guard let chromium, let driver, selenium else {
            let missing = [chromium == nil ? "chromium" : nil, driver == nil ? "chromium-driver" : nil, selenium ? nil : "selenium in .local/venv"]
                .compactMap { $0 }.joined(separator: ", ")
            throw StoreError.configuration(
                "the browser test needs \(missing): run scripts/browser (scripts/test does), or set STORELEDGER_SKIP_BROWSER_TESTS=1 to skip it")
        }
        return (chromium, driver, python)
    }

    /// The original transaction id and the notifications, in signing order, of a `simulate --lifecycle` run's output
    /// (`1/6  SUBSCRIBED/INITIAL_BUY   2093094899367000  200`).
    static func simulated(_ output: String) throws -> (originalTransactionID: String, labels: [String]) {
        var labels: [String] = []
        var ids = Set<String>()
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 4, fields[0].contains("/"), fields[0].first?.isNumber == true else { continue }
            labels.append(String(fields[1]))
            ids.insert(String(fields[2]))
        }
        guard ids.count == 1, let id = ids.first, !labels.isEmpty else {
            throw StoreError.configuration("cannot read the simulated subscription from:\n\(output)")
        }
        return (id, labels)
    }

    /// Whether a GET of `url` answers 200.
    static func answers(_ url: String) async -> Bool {
        guard let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(1)) else { return false }
        return response.status == .ok
    }

    /// POSTs a notification body; the event id of a 200, nil for anything else.
    static func post(_ body: String, to url: String) async -> Int64? {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        guard let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(10)), response.status == .ok,
            let data = try? await response.body.collect(upTo: 4096),
            let json = try? JSONSerialization.jsonObject(with: Data(String(buffer: data).utf8)) as? [String: Any]
        else { return nil }
        return (json["event_id"] as? NSNumber)?.int64Value
    }
}
