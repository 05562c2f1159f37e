import Foundation
package import Logging
package import PostgresNIO
package import StoreLedgerCore

/// The product catalog in the database (`product_catalog`, migration 0012), where `entitlements_at` reads it, so
/// the SQL definition of "entitled now" and the app-facing routes use the same catalog.
package enum ProductCatalogStore {
    /// Replaces the stored catalog with `catalog` in one transaction (the empty catalog empties the table: no
    /// catalog). The app-facing API publishes its `PRODUCT_CATALOG` this way when it starts.
    package static func publish(_ catalog: ProductCatalog, client: PostgresClient, logger: Logger) async throws {
        let products = catalog.products.values.sorted { $0.productID.rawValue < $1.productID.rawValue }
        // Entitlement lists travel as JSON text (an array of arrays has no single Postgres type); "" = absent.
        let entitlements = try products.map { product -> String in
            try product.entitlements.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) } ?? ""
        }
        try await client.inTransaction(logger: logger) { connection in
            try await connection.query("LOCK TABLE product_catalog IN EXCLUSIVE MODE", logger: logger)
            try await connection.query("DELETE FROM product_catalog", logger: logger)
            guard !products.isEmpty else { return }
            try await connection.query(
                """
                INSERT INTO product_catalog (product_id, entitlements, period, display_name)
                SELECT i.id, CASE WHEN i.entitlements = '' THEN NULL
                                  ELSE ARRAY(SELECT jsonb_array_elements_text(i.entitlements::jsonb)) END,
                       nullif(i.period, ''), nullif(i.name, '')
                FROM unnest(\(products.map(\.productID.rawValue))::text[], \(entitlements)::text[],
                            \(products.map { $0.period?.description ?? "" })::text[], \(products.map { $0.displayName ?? "" })::text[])
                    AS i(id, entitlements, period, name)
                """,
                logger: logger
            )
        }
    }
}
