import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import StoreLedgerTestSupport
import Testing

/// Seed 000's iOS client decodes answers with these exact `Codable` structs and a default `JSONDecoder` (translated
/// from the seed's `APIClient`): a `null` in a non-optional field, or a wrong type, would throw in the app. Real
/// answers of `/transaction`, `/restore` and `/status` must decode, and hold no `null` anywhere.
@Suite("App API: seed 000's Codable client decodes real answers")
struct SeedCodableShapesTests {
    static let pki = try! TestPKI()

    struct AppStoreVerifyResponse: Codable {
        let success: Bool
        let isPremium: Bool
        let subscription: AppStoreSubscription?
        enum CodingKeys: String, CodingKey {
            case success
            case isPremium = "is_premium"
            case subscription
        }
    }

    struct AppStoreRestoreResponse: Codable {
        let success: Bool
        let restoredCount: Int
        let isPremium: Bool
        let activeSubscription: AppStoreSubscription?
        enum CodingKeys: String, CodingKey {
            case success
            case restoredCount = "restored_count"
            case isPremium = "is_premium"
            case activeSubscription = "active_subscription"
        }
    }

    struct AppStoreStatusResponse: Codable {
        let hasSubscription: Bool
        let source: String?
        let status: String?
        let productId: String?
        let expiresDate: String?
        enum CodingKeys: String, CodingKey {
            case hasSubscription = "has_subscription"
            case source
            case status
            case productId = "product_id"
            case expiresDate = "expires_date"
        }
    }

    struct AppStoreSubscription: Codable {
        let productId: String
        let expiresDate: String?
        let isActive: Bool?
        let environment: String?
        enum CodingKeys: String, CodingKey {
            case productId = "product_id"
            case expiresDate = "expires_date"
            case isActive = "is_active"
            case environment
        }
    }

    @Test("transaction, restore and status answers decode with the seed's structs, before and after a purchase")
    func seed000AnswersDecode() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            try await harness.app.test(.router) { client in
                let headers = try await AppAPIHarness.headers(user: "kim")
                func data(_ response: TestResponse) -> Data { Data(response.body.readableBytesView) }
                let prefix = "/api/v1/payments/appstore"

                let none = try await client.execute(uri: "\(prefix)/status", method: .get, headers: headers)
                let nothing = try SeedIAPClient.decode(AppStoreStatusResponse.self, data(none))
                #expect(!nothing.hasSubscription)

                let bought = try await client.execute(
                    uri: "\(prefix)/transaction", method: .post, headers: headers,
                    body: try AppAPIHarness.body(["signed_transaction": try harness.subscription("6100")]))
                let verify = try SeedIAPClient.decode(AppStoreVerifyResponse.self, data(bought))
                #expect(verify.success && verify.subscription?.productId == "com.example.storeledger.monthly")
                #expect(verify.subscription?.expiresDate != nil)

                let restored = try await client.execute(
                    uri: "\(prefix)/restore", method: .post, headers: headers,
                    body: try AppAPIHarness.body(["transactions": [try harness.subscription("6100"), try harness.nonConsumable("6101")]]))
                let restore = try SeedIAPClient.decode(AppStoreRestoreResponse.self, data(restored))
                #expect(restore.restoredCount == 2)

                let status = try SeedIAPClient.decode(
                    AppStoreStatusResponse.self, data(try await client.execute(uri: "\(prefix)/status", method: .get, headers: headers)))
                #expect(status.source == "appstore")
                #expect(status.productId != nil && status.expiresDate != nil)
            }
        }
    }
}
