import Foundation
import StoreLedgerCore
import Testing

/// A catalog file that cannot be used fails with a code saying why and a detail naming the field or product.
@Suite("Core: product catalog errors")
struct CoreProductCatalogTests {
    @Test(arguments: [
        (#"{"products": [{"product_id": "a", "entitlements": [], "period": "P2X"}]}"#, ProductCatalogError.Code.malformed),
        (#"{"items": []}"#, .malformed),
        (#"{"products": [{"product_id": "", "entitlements": []}]}"#, .invalidProduct),
        (#"{"products": [{"product_id": "a", "entitlements": []}, {"product_id": "a", "entitlements": []}]}"#, .invalidProduct),
    ])
    func anUnusableCatalogSaysWhy(_ json: String, _ code: ProductCatalogError.Code) {
        let error = #expect(throws: ProductCatalogError.self) { _ = try ProductCatalog(json: Data(json.utf8)) }
        #expect(error?.code == code)
        #expect(error?.description.hasPrefix("product catalog: ") == true)
    }

    @Test func aWellFormedCatalogParses() throws {
        let catalog = try ProductCatalog(json: Data(#"{"products": [{"product_id": "a", "entitlements": ["premium"], "period": "P1M"}]}"#.utf8))
        #expect(catalog.products.count == 1)
    }
}
