import Foundation
import StoreLedgerCore
import Testing

@Suite("Product catalog: the example file in config/")
struct ProductCatalogExampleTests {
    @Test func theDocumentedExampleParses() throws {
        let repository = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let catalog = try ProductCatalog(json: try Data(contentsOf: repository.appendingPathComponent("config/products.example.json")))
        #expect(catalog.products.count == 4)
        #expect(catalog.products["com.example.fullunlock"]?.entitlements == ["premium"])
        #expect(catalog.products["com.example.coins.100"]?.entitlements == [])
        #expect(catalog.period(of: "com.forkintheroad.app.premium.yearly")?.plainName == "yearly")
    }
}
