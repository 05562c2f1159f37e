import Foundation
import StoreLedgerCore
import StoreLedgerTestSupport
import Testing

@Suite("Product catalog: the example file in config/")
struct ProductCatalogExampleTests {
    @Test func theDocumentedExampleParses() throws {
        let catalog = try ProductCatalog(
            json: try Data(contentsOf: ThrowawayCluster.repositoryRoot.appendingPathComponent("config/products.example.json")))
        #expect(catalog.products.count == 4)
        #expect(catalog.products["com.example.fullunlock"]?.entitlements == ["premium"])
        #expect(catalog.products["com.example.coins.100"]?.entitlements == [])
        #expect(catalog.period(of: "com.forkintheroad.app.premium.yearly")?.plainName == "yearly")
    }
}
