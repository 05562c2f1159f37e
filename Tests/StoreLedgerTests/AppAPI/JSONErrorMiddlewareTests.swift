import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import StoreLedgerHTTP
import StoreLedgerStore
import Testing

/// What the app API's error middleware answers for the storage layer's failures.
@Suite("JSON errors: what the app API answers when the database fails")
struct JSONErrorMiddlewareTests {
    /// A transaction known not to have committed, a database that did not answer in time and work undone by a rebuild are
    /// outages to retry (503 `storage_unavailable`, nothing accepted), not the server's fault (500); a broken invariant
    /// stays a 500.
    @Test(arguments: [
        ("not-committed", HTTPResponse.Status.serviceUnavailable, "storage_unavailable"),
        ("unavailable", .serviceUnavailable, "storage_unavailable"),
        ("concurrent-change", .serviceUnavailable, "storage_unavailable"),
        ("deadline", .serviceUnavailable, "storage_unavailable"),
        ("invariant", .internalServerError, "internal_error"),
    ])
    func storageFailuresAreAnsweredAsOutagesToRetry(_ path: String, _ status: HTTPResponse.Status, _ code: String) async throws {
        let router = Router(context: StoreLedgerRequestContext.self)
        router.add(middleware: JSONErrorMiddleware())
        router.get("not-committed") { _, _ -> String in throw StoreError(.notCommitted, "COMMIT answered ROLLBACK") }
        router.get("unavailable") { _, _ -> String in throw StoreError(.unavailable, "no answer") }
        router.get("concurrent-change") { _, _ -> String in throw StoreError(.concurrentChange, "a rebuild swapped") }
        router.get("deadline") { _, _ -> String in throw DeadlineExceeded(limit: .seconds(10)) }
        router.get("invariant") { _, _ -> String in throw StoreError(.invariantBroken, "an insert returned no row") }
        try await Application(router: router).test(.router) { client in
            let response = try await client.execute(uri: "/\(path)", method: .get)
            #expect(response.status == status)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
            #expect(json["code"] as? String == code)
            #expect((json["error"] as? String)?.contains("ROLLBACK") == false, "the detail is logged, not answered")
        }
    }
}
