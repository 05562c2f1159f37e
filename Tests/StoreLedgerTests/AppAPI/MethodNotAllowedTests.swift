import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import Prometheus
import StoreLedgerHTTP
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// A known path asked with a method it does not answer is 405 with `Allow` and the JSON error body; an unknown path
/// stays 404.
@Suite("HTTP: 405 for a known path's unknown method")
struct MethodNotAllowedTests {
    static let pki = try! TestPKI()

    /// Checks one 405 answer: status, `Allow`, `{error, code: "method_not_allowed"}`.
    func expect405(_ response: TestResponse, allow: String, _ comment: String) throws {
        #expect(response.status == .methodNotAllowed, "\(comment)")
        #expect(response.headers[.allow] == allow, "\(comment)")
        #expect(response.headers[.contentType]?.hasPrefix("application/json") == true, "\(comment)")
        let json = try AppAPIHarness.json(response)
        #expect(json["code"] as? String == "method_not_allowed", "\(comment)")
        #expect((json["error"] as? String)?.isEmpty == false, "\(comment)")
        #expect(Set(json.keys) == ["error", "code"], "\(comment)")
    }

    @Test func receiverRoutesAnswer405WithAllowPOST() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            try await harness.app.test(.router) { client in
                for route in ReceiverController.routes {
                    for method in [HTTPRequest.Method.get, .put, .delete, .patch] {
                        let path = route.path.description
                        try expect405(try await client.execute(uri: path, method: method), allow: "POST", "\(method) \(path)")
                    }
                }
                try expect405(try await client.execute(uri: "/notifications/apple/", method: .get), allow: "POST", "trailing slash")
                try expect405(try await client.execute(uri: "/healthz", method: .post), allow: "GET", "POST /healthz")
                try expect405(try await client.execute(uri: "/readyz", method: .delete), allow: "GET", "DELETE /readyz")
            }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 0)
        }
    }

    @Test func appAPIRoutesAnswer405WithTheirMethods() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            let cases: [(HTTPRequest.Method, String, String)] = [
                (.get, "/api/v1/payments/appstore/transaction", "POST"),
                (.put, "/api/v1/payments/appstore/restore", "POST"),
                (.post, "/api/v1/payments/appstore/status", "GET"),
                (.get, "/api/v1/payments/appstore/verify", "POST"),
                (.get, "/api/iap/validate", "POST"),
                (.patch, "/api/iap/validate/sand", "POST"),
                (.post, "/api/subscription/status", "GET"),
                (.get, "/api/subscription/sync", "POST"),
                (.post, "/v1/users/alice/entitlements", "GET"),
                (.get, "/v1/purchase-intents", "POST"),
                (.delete, "/v1/purchase-intents/\(UUID())", "GET"),
                (.options, "/v1/purchase-intents/not-a-uuid", "GET"),
            ]
            try await harness.app.test(.router) { client in
                for (method, path, allow) in cases {
                    // No credentials: the method is wrong whoever asks, so 405 comes before authentication.
                    try expect405(try await client.execute(uri: path, method: method), allow: allow, "\(method) \(path)")
                    try expect405(
                        try await client.execute(uri: path, method: method, headers: AppAPIHarness.serviceHeaders), allow: allow,
                        "\(method) \(path) as a server"
                    )
                }
                // The documented method still answers as before.
                #expect(
                    try await client.execute(uri: "/v1/users/alice/entitlements", method: .get, headers: AppAPIHarness.serviceHeaders).status == .ok)
            }
        }
    }

    @Test func unknownPathsStay404() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            try await harness.app.test(.router) { client in
                for (method, path) in [
                    (HTTPRequest.Method.get, "/nope"), (.post, "/notifications/apple/extra"), (.get, "/v1/users/alice"),
                    (.delete, "/api/v1/payments/appstore"), (.get, "/metrics"), (.post, "/v1/users//entitlements"),
                ] {
                    let response = try await client.execute(uri: path, method: method)
                    #expect(response.status == .notFound, "\(method) \(path)")
                    #expect(response.headers[.allow] == nil, "\(method) \(path)")
                    #expect(try AppAPIHarness.json(response)["code"] as? String == "not_found", "\(method) \(path)")
                }
            }
        }
    }

    @Test func theAdminPortAnswers405Too() async throws {
        try await TestDatabase.withFresh { db in
            let router = AdminApplication.router(
                registry: PrometheusCollectorRegistry(), client: db.client, migrator: Migrator(migrations: try Migration.bundled())
            )
            try await Application(router: router).test(.router) { client in
                try expect405(try await client.execute(uri: "/metrics", method: .post), allow: "GET", "POST /metrics")
                #expect(try await client.execute(uri: "/nope", method: .get).status == .notFound)
                #expect(try await client.execute(uri: "/metrics", method: .get).status == .ok)
            }
        }
    }
}
