package import Foundation
package import Logging
package import PostgresNIO
package import StoreLedgerCore

/// Purchase intents (`purchase_intents`); completion is read from the verified `transactions`, never stored.
package struct PurchaseIntentStore: Sendable {
    /// The Postgres client.
    package let client: PostgresClient

    /// Creates the store.
    package init(client: PostgresClient) {
        self.client = client
    }

    /// Creates an intent for `user` buying `product` in the declared `environment` (if any), valid for `lifetime`, and
    /// registers its correlation id as an appAccountToken owned by `user` — in one transaction.
    package func create(
        for user: UserID, product: ProductID, environment: PurchaseIntent.Environment? = nil, lifetime: Duration, logger: Logger
    ) async throws -> PurchaseIntent {
        let id = UUID()
        let seconds = Double(lifetime.components.seconds)
        return try await client.inTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                """
                INSERT INTO purchase_intents (correlation_id, user_id, product_id, environment, expires_at)
                VALUES (
                    \(id), \(user.rawValue), \(product.rawValue), \(environment?.rawValue),
                    now() + make_interval(secs => \(seconds)::float8)
                )
                RETURNING created_at, expires_at
                """,
                logger: logger
            )
            var times: (Date, Date)?
            for try await row in rows.decode((Date, Date).self) { times = row }
            guard let (createdAt, expiresAt) = times else { throw StoreError(.invariantBroken, "the intent insert returned no row") }
            try await UserLinkStore.claimToken(id.uuidString, for: user, origin: "purchase_intent", on: connection, logger: logger)
            return PurchaseIntent(
                correlationID: id, userID: user, productID: product, environment: environment, createdAt: createdAt, expiresAt: expiresAt,
                completion: nil
            )
        }
    }

    /// The intent with `id` and its completion, if any.
    package func find(_ id: UUID, logger: Logger) async throws -> PurchaseIntent? {
        let rows = try await client.rows(
            """
            SELECT i.correlation_id, i.user_id, i.product_id, i.created_at, i.expires_at, i.environment,
                   t.transaction_id, t.original_transaction_id, t.product_id, t.environment, t.recorded_at
            FROM purchase_intents i
            LEFT JOIN LATERAL (
                SELECT transaction_id, original_transaction_id, product_id, environment, recorded_at
                FROM transactions
                WHERE lower(app_account_token) = lower(i.correlation_id::text)
                ORDER BY recorded_at, fact_sha256
                LIMIT 1
            ) t ON true
            WHERE i.correlation_id = \(id)
            """,
            logger: logger
        )
        for row in rows {
            let columns = row.makeRandomAccess()
            var intent = PurchaseIntent(
                correlationID: try columns[0].decode(UUID.self), userID: UserID(try columns[1].decode(String.self)),
                productID: ProductID(try columns[2].decode(String.self)),
                environment: try columns[5].decode(String?.self).flatMap(PurchaseIntent.Environment.init(rawValue:)),
                createdAt: try columns[3].decode(Date.self), expiresAt: try columns[4].decode(Date.self), completion: nil
            )
            if let transactionID = try columns[6].decode(String?.self) {
                intent.completion = .init(
                    transactionID: transactionID, originalTransactionID: try columns[7].decode(String?.self) ?? transactionID,
                    productID: try columns[8].decode(String?.self), environment: try columns[9].decode(String?.self) ?? "",
                    completedAt: try columns[10].decode(Date.self)
                )
            }
            return intent
        }
        return nil
    }
}
