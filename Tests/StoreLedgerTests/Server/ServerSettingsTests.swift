import Configuration
import Foundation
import StoreLedgerAppStoreAPI
import StoreLedgerHTTP
import StoreLedgerProcessing
import StoreLedgerServer
import StoreLedgerStore
import StoreLedgerTestSupport
import StoreLedgerVerification
import Testing

/// Every setting goes through the one reader the builders are given, and a bad one names its key.
@Suite("Server settings")
struct ServerSettingsTests {
    /// The keys of the README's configuration table (every backticked name in a row's first cell).
    static func readmeKeys() throws -> Set<String> {
        let readme = try String(contentsOf: ThrowawayCluster.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        guard let start = readme.range(of: "## Configuration") else { return [] }
        let section = readme[start.upperBound...].prefix { _ in true }
        let end = section.range(of: "\n## ")?.lowerBound ?? section.endIndex
        var keys: Set<String> = []
        for line in section[..<end].split(separator: "\n") where line.hasPrefix("| `") {
            let firstCell = line.dropFirst(2).prefix { $0 != "|" }
            for (index, part) in firstCell.split(separator: "`", omittingEmptySubsequences: false).enumerated() where index % 2 == 1 {
                keys.insert(String(part))
            }
        }
        return keys
    }

    @Test("every key of the README's configuration table is read through the builders' reader, and every key read is in it")
    func everyDocumentedSettingIsReadThroughTheReader() async throws {
        let documented = try Self.readmeKeys()
        #expect(documented.count > 40)
        #expect(documented.isSuperset(of: ["LOG_FORMAT", "WEBHOOK_MAX_ATTEMPTS", "DATABASE_URL", "HOST", "PORT"]))
        try await TestDatabase.withFresh { db in
            let folder = try ServerHarness.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            // Switch on what reads more settings: the app-facing API (an API key), anonymous validate, the admin port.
            var variables = ServerHarness.baseVariables(db)
            variables["ADMIN_API_KEY"] = "k"
            variables["IAP_VALIDATE_ANONYMOUS"] = "true"
            variables["ADMIN_PORT"] = "0"
            let recorder = ServerHarness.KeyRecorder()
            try await ServerHarness.buildEverything(ServerHarness.reader(variables, recorder: recorder), folder: folder)
            let read = recorder.all
            #expect(documented.subtracting(read).isEmpty, "documented but never read: \(documented.subtracting(read).sorted())")
            #expect(read.subtracting(documented).isEmpty, "read but not documented: \(read.subtracting(documented).sorted())")
        }
    }

    /// Malformed values, each with the settings it needs to be read at all.
    static let badValues: [(key: String, value: String, with: [String: String])] = [
        ("DATABASE_URL", "mysql://db/ledger", [:]),
        ("DATABASE_POOLER", "statement", [:]),
        ("DATABASE_LISTEN_URL", "not a url", [:]),
        ("DATABASE_MAX_CONNECTIONS", "0", [:]),
        // The worker's LISTEN would hold the only connection for good, and its claims would wait forever.
        ("DATABASE_MAX_CONNECTIONS", "1", [:]),
        ("FACT_CACHE_SIZE", "-1", [:]),
        ("LOG_LEVEL", "loud", [:]),
        ("LOG_FORMAT", "xml", [:]),
        ("SHUTDOWN_TIMEOUT_SECONDS", "0", [:]),
        ("PORT", "http", [:]),
        ("RECEIVER_MAX_BODY_BYTES", "12", [:]),
        ("RECEIVER_STORE_TIMEOUT_MS", "soon", [:]),
        ("HTTP_IDLE_TIMEOUT_SECONDS", "0", [:]),
        ("HTTP_REQUEST_TIMEOUT_SECONDS", "forever", [:]),
        ("WORKER_CONCURRENCY", "-2", [:]),
        ("WORKER_BATCH_SIZE", "0", [:]),
        ("WORKER_LEASE_SECONDS", "1h", [:]),
        ("WORKER_POLL_SECONDS", "0", [:]),
        ("WORKER_MAX_ATTEMPTS", "1000", [:]),
        ("WEBHOOK_MAX_ATTEMPTS", "many", [:]),
        ("RECONCILE_INTERVAL_SECONDS", "5", [:]),
        ("ADMIN_PORT", "70000", [:]),
        ("APP_APPLE_ID", "abc", [:]),
        ("APPS", ":123", [:]),
        ("APPLE_ENVIRONMENTS", "Staging", [:]),
        // One app's Apple ID for two apps: the second app's Production data would be rejected once live.
        ("APP_APPLE_ID", "1234", ["APP_BUNDLE_ID": "com.example.app,com.example.other"]),
        ("APPLE_ROOT_CAS_DER_BASE64", "not base64!", [:]),
        ("ALLOW_XCODE_DATA", "perhaps", [:]),
        ("IAP_VALIDATE_ANONYMOUS", "maybe", [:]),
        ("IAP_VALIDATE_ANONYMOUS_PER_MINUTE", "0", ["IAP_VALIDATE_ANONYMOUS": "true"]),
        ("IAP_VALIDATE_ANONYMOUS_TOTAL_PER_MINUTE", "lots", ["IAP_VALIDATE_ANONYMOUS": "true"]),
        ("TRUSTED_PROXIES", "the load balancer", ["IAP_VALIDATE_ANONYMOUS": "true"]),
        ("PRODUCT_CATALOG", "/nonexistent/catalog.json", ["ADMIN_API_KEY": "k"]),
        ("PURCHASE_INTENT_TTL_SECONDS", "1", ["ADMIN_API_KEY": "k"]),
        ("AUTH_JWT_SECRET", "short", [:]),
        // The issuer is every user's: as the user id it would make them one user.
        ("AUTH_JWT_USER_CLAIM", "iss", ["AUTH_JWT_SECRET": "a-host-sign-in-secret-of-at-least-32-bytes"]),
        ("APPSTORE_KEY_ID", "", ["APPSTORE_ISSUER_ID": "issuer", "APPSTORE_PRIVATE_KEY": "key"]),
        ("APPSTORE_PRIVATE_KEY", "not a key", ["APPSTORE_ISSUER_ID": "issuer", "APPSTORE_KEY_ID": "key"]),
    ]

    @Test("a malformed value stops the build with an error naming its key")
    func badValuesNameTheirKey() async throws {
        try await TestDatabase.withFresh { db in
            let folder = try ServerHarness.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            // The valid base builds.
            try await ServerHarness.buildEverything(ServerHarness.reader(ServerHarness.baseVariables(db)), folder: folder)
            for (key, value, extra) in Self.badValues {
                var variables = ServerHarness.baseVariables(db).merging(extra) { $1 }
                variables[key] = value
                let error = await #expect(throws: (any Error).self, "\(key)=\(value)") {
                    try await ServerHarness.buildEverything(ServerHarness.reader(variables), folder: folder)
                }
                #expect(error.map { String(describing: $0).contains(key) } == true, "\(key)=\(value): \(error.map { String(describing: $0) } ?? "")")
            }
        }
    }

    @Test("a stray comma in APP_BUNDLE_ID names no app; APPS alone names the App Store Server API's app")
    func bundleListsAndTheAppStoreAPIsApp() throws {
        let strayComma = Settings(reader: ServerHarness.reader(["APP_BUNDLE_ID": "com.example.app, ", "APP_APPLE_ID": "1234"]))
        #expect(try strayComma.apps() == [AppIdentity(bundleID: "com.example.app", appAppleID: 1234)])
        let blank = Settings(reader: ServerHarness.reader(["APP_BUNDLE_ID": " , "]))
        #expect(throws: SettingsError.self) { try blank.apps() }
        let listed = Settings(
            reader: ServerHarness.reader([
                "APPS": "com.example.app:1234,com.example.other:5678", "APPSTORE_ISSUER_ID": "issuer", "APPSTORE_KEY_ID": "key",
                "APPSTORE_PRIVATE_KEY": "pem",
            ]))
        #expect(try listed.appStoreAPI()?.bundleID == "com.example.app")
        let leadingComma = Settings(
            reader: ServerHarness.reader([
                "APP_BUNDLE_ID": " ,com.example.app", "APPSTORE_ISSUER_ID": "issuer", "APPSTORE_KEY_ID": "key", "APPSTORE_PRIVATE_KEY": "pem",
            ]))
        #expect(try leadingComma.appStoreAPI()?.bundleID == "com.example.app")
        #expect(try leadingComma.apps().map(\.bundleID) == ["com.example.app"])
    }

    /// One App Store Server API client per app, each naming its app in its tokens: the first is the one lookups use.
    @Test func everyAppGetsItsOwnAppStoreClient() async throws {
        let settings = Settings(
            reader: ServerHarness.reader([
                "APPS": "com.example.app:1234,com.example.other:5678", "APPSTORE_ISSUER_ID": "issuer", "APPSTORE_KEY_ID": "key",
                "APPSTORE_PRIVATE_KEY": P256Key.freshPEM(),
            ]))
        #expect(try await settings.appStoreClients().map(\.configuration.bundleID) == ["com.example.app", "com.example.other"])
        #expect(try await settings.appStoreClient()?.configuration.bundleID == "com.example.app")
        // The app-facing API's lookups ask as its own app (APP_API_BUNDLE_ID): Apple answers "not found" to another's token.
        #expect(try await settings.appStoreClient(bundleID: "com.example.other")?.configuration.bundleID == "com.example.other")
        // With APPS set, APP_BUNDLE_ID names no further app to ask (the deployment accepts APPS' apps only).
        let both = Settings(
            reader: ServerHarness.reader([
                "APPS": "com.example.app:1234,com.example.other:5678", "APP_BUNDLE_ID": "com.example.unaccepted",
                "APPSTORE_ISSUER_ID": "issuer", "APPSTORE_KEY_ID": "key", "APPSTORE_PRIVATE_KEY": P256Key.freshPEM(),
            ]))
        #expect(try await both.appStoreClients().map(\.configuration.bundleID) == ["com.example.app", "com.example.other"])
        #expect(try await Settings(reader: ServerHarness.reader(["APP_BUNDLE_ID": "com.example.app"])).appStoreClients().isEmpty)
    }

    /// The app-facing API answers for one app: the only accepted one, or `APP_API_BUNDLE_ID` among several; several
    /// without it, or naming an app not accepted, stops the process with the setting named.
    @Test func theAppFacingAPIAnswersForOneApp() throws {
        let two = ["com.example.app", "com.example.other"]
        #expect(try Settings(reader: ServerHarness.reader([:])).appAPIBundleID(accepted: ["com.example.app"]) == "com.example.app")
        #expect(
            try Settings(reader: ServerHarness.reader(["APP_API_BUNDLE_ID": " com.example.other "])).appAPIBundleID(accepted: two)
                == "com.example.other")
        let unnamed = #expect(throws: SettingsError.self) { try Settings(reader: ServerHarness.reader([:])).appAPIBundleID(accepted: two) }
        #expect(unnamed?.key == "APP_API_BUNDLE_ID")
        #expect(unnamed?.description.contains("com.example.app, com.example.other") == true, "\(String(describing: unnamed))")
        let unaccepted = #expect(throws: SettingsError.self) {
            try Settings(reader: ServerHarness.reader(["APP_API_BUNDLE_ID": "com.example.third"])).appAPIBundleID(accepted: two)
        }
        #expect(unaccepted?.key == "APP_API_BUNDLE_ID")
    }

    @Test("the Kubernetes config map's settings read as they are meant: its apps accept Production, its proxies parse")
    func theKubernetesConfigMapReads() throws {
        let text = try String(contentsOf: ThrowawayCluster.repositoryRoot.appendingPathComponent("deploy/k8s/configmap.yaml"), encoding: .utf8)
        // The `data:` block's `  KEY: value` lines (values plain or double-quoted).
        var variables: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("  ") && !line.hasPrefix("   ") {
            let content = line.dropFirst(2)
            guard let colon = content.firstIndex(of: ":"), content.first?.isUppercase == true,
                content[..<colon].allSatisfy({ $0.isUppercase || $0.isNumber || $0 == "_" })
            else { continue }
            var value = content[content.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            variables[String(content[..<colon])] = value
        }
        #expect(variables["TRUSTED_PROXIES"] != nil)
        let settings = Settings(reader: ServerHarness.reader(variables))
        let proxies = try #require(try settings.anonymousValidation()).addresses.trustedProxies
        #expect(proxies.count == variables["TRUSTED_PROXIES"]?.split(separator: ",").count)
        #expect(try settings.verifiers().productionRefusalWarning == nil)
    }

    @Test("compose passes every setting of deploy/.env to each app container, not only the keys it names")
    func composeReadsItsSettingsFile() throws {
        let text = try String(contentsOf: ThrowawayCluster.repositoryRoot.appendingPathComponent("deploy/compose.yaml"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // The shared `x-storeledger` block (up to the next top-level key) reads the optional settings file.
        let start = try #require(lines.firstIndex(of: "x-storeledger: &storeledger"))
        let block = lines[(start + 1)...].prefix { $0.isEmpty || $0.hasPrefix(" ") || $0.hasPrefix("#") }
        let envFile = try #require(block.firstIndex(of: "  env_file:"))
        #expect(block[(envFile + 1)...].prefix(2).map { $0.trimmingCharacters(in: .whitespaces) } == ["- path: .env", "required: false"])
        // Every service running the image (the `build:` in that block) takes the block, so none misses the file.
        let services = ["migrate", "web", "worker"]
        for service in services {
            let at = try #require(lines.firstIndex(of: "  \(service):"), "\(service)")
            #expect(lines[at + 1] == "    <<: *storeledger", "\(service)")
        }
        #expect(lines.filter { $0.hasPrefix("    <<: *storeledger") }.count == services.count)
    }

    @Test("the database settings reach what runs statements: the pooler's sessions and the fact cache's size")
    func theDatabaseSettingsAreInjected() async throws {
        try await TestDatabase.withFresh { db in
            var variables = ServerHarness.baseVariables(db)
            variables["DATABASE_POOLER"] = "transaction"
            variables["FACT_CACHE_SIZE"] = "7"
            let context = try await ServerHarness.context(ServerHarness.reader(variables))
            #expect(context.sessions.pooler == .transaction)
            #expect(context.factCache.capacity == 7)
            #expect(context.listenClient == nil)
            let defaults = try await ServerHarness.context(ServerHarness.reader(ServerHarness.baseVariables(db)))
            #expect(defaults.sessions.pooler == .direct)
            #expect(defaults.factCache.capacity == DecodedFactCache.defaultCapacity)
            #expect(defaults.sessions !== context.sessions)
        }
    }
}
