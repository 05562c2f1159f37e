import Foundation
package import Hummingbird
import Logging
import StoreLedgerCore
import StoreLedgerProcessing
import StoreLedgerStore

/// Seed 000's contract for StoreKit 2 apps, under `/api/v1/payments/appstore` (bearer JWT of the user):
///
/// - `POST /transaction` `{signed_transaction}` → `{success, is_premium, subscription{product_id, expires_date, is_active, environment}}`
/// - `POST /restore` `{transactions: [jws…]}` → `{success, restored_count, is_premium, active_subscription{product_id, expires_date}}`
/// - `GET /status` → `{has_subscription, source: "appstore", status, product_id, expires_date, environment}`
/// - `POST /verify` `{receipt_data}` (legacy StoreKit 1 receipt) → as `/transaction`
///
/// Every JWS goes into the event log (source `client`) and through the one handler while the caller waits.
/// `is_premium` and `has_subscription` both mean "holds something granting `premium` now" as `entitlements_at`
/// defines it (docs/app-api.md): a consumable alone never makes a user premium or subscribed.
package struct AppStorePaymentsController: Sendable {
    /// The route prefix.
    package static let prefix: RouterPath = "/api/v1/payments/appstore"
    /// The most transactions one restore may carry.
    package static let maximumRestoreCount = 200
    /// The largest transaction a restore reads: 16 KiB. A transaction as Apple signs it is about 6 kB (most of it the
    /// header's certificate chain); a larger element is counted rejected without being verified or logged.
    package static let maximumRestoreTransactionBytes = 16 * 1024
    /// The largest restore body: ``maximumRestoreCount`` transactions of ``maximumRestoreTransactionBytes`` (200 of
    /// Apple's did not fit in the 1 MiB other bodies get).
    package static let maximumRestoreBytes = maximumRestoreCount * maximumRestoreTransactionBytes

    /// The shared dependencies.
    package let dependencies: AppAPIDependencies

    /// Creates the controller.
    package init(dependencies: AppAPIDependencies) {
        self.dependencies = dependencies
    }

    /// The `subscription` object of seed 000.
    struct SubscriptionBody: Encodable {
        var product_id: String?
        var expires_date: Date?
        var is_active: Bool
        var environment: String
    }

    /// The answer to `POST /transaction` (and to the legacy `POST /verify`).
    struct TransactionResponse: Encodable {
        var success: Bool
        var is_premium: Bool
        var subscription: SubscriptionBody?
    }

    /// The `active_subscription` object of a restore.
    struct ActiveSubscriptionBody: Encodable {
        var product_id: String?
        var expires_date: Date?
    }

    /// The answer to `POST /restore`.
    struct RestoreResponse: Encodable {
        var success: Bool
        var restored_count: Int
        var rejected_count: Int
        var is_premium: Bool
        var active_subscription: ActiveSubscriptionBody?
    }

    /// The answer to `GET /status`.
    struct StatusResponse: Encodable {
        var has_subscription: Bool
        var source: String
        var status: String
        var product_id: String?
        var expires_date: Date?
        var environment: String?
    }

    /// Adds the routes to `router` behind user authentication.
    package func addRoutes(to router: Router<StoreLedgerRequestContext>) {
        let group = router.group(Self.prefix)
            .add(middleware: AuthenticationMiddleware(authenticator: dependencies.authenticator, requirement: .user))
        group.post("transaction") { request, context in try await transaction(request, context: context) }
        group.post("restore") { request, context in try await restore(request, context: context) }
        group.get("status") { _, context in try await status(context: context) }
        group.post("verify") { request, context in try await verifyReceipt(request, context: context) }
    }

    func transaction(_ request: Request, context: StoreLedgerRequestContext) async throws -> Response {
        struct Body: Decodable { var signed_transaction: String }
        let body = try await JSONBody.decode(Body.self, from: request, context: context)
        let user = try context.requireUser()
        let submission = try await dependencies.intake.submit(
            signedTransaction: body.signed_transaction, source: .client, user: user,
            origin: context.origin(request), logger: context.logger
        )
        let accepted = try submission.requireAccepted()
        return try await answer(for: accepted, user: user, context: context)
    }

    /// The `/transaction` answer for an accepted transaction (shared with the legacy receipt route).
    func answer(for accepted: PurchaseSubmission.Accepted, user: UserID, context: StoreLedgerRequestContext) async throws -> Response {
        let now = dependencies.now()
        let summary = try await dependencies.intake.summary(of: user, at: now, logger: context.logger)
        // The transaction's row, read again at the time of asking (the submission read it at its own instant).
        var row: Entitlement?
        if let stored = accepted.entitlement {
            row = try await dependencies.intake.entitlement(
                environment: stored.environment, transactionID: stored.transactionID ?? stored.originalTransactionID, at: now,
                logger: context.logger
            )
        }
        let subscription = SubscriptionBody(
            product_id: row?.productID ?? accepted.transaction.productID?.rawValue,
            expires_date: row?.accessEndsAt ?? accepted.transaction.expiresDate?.date,
            is_active: row?.entitledNow ?? false,
            environment: row?.environment ?? accepted.transaction.environment?.rawValue ?? ""
        )
        return try JSONBody.response(TransactionResponse(success: true, is_premium: summary.isPremium, subscription: subscription))
    }

    func restore(_ request: Request, context: StoreLedgerRequestContext) async throws -> Response {
        struct Body: Decodable { var transactions: [String] }
        let body = try await JSONBody.decode(Body.self, from: request, context: context, upTo: Self.maximumRestoreBytes)
        guard body.transactions.count <= Self.maximumRestoreCount else {
            throw APIError(.badRequest, code: "too_many_transactions", message: "a restore carries at most \(Self.maximumRestoreCount) transactions")
        }
        let user = try context.requireUser()
        var restored = 0
        var rejected = 0
        for jws in body.transactions {
            guard jws.utf8.count <= Self.maximumRestoreTransactionBytes else {
                rejected += 1
                context.logger.notice("restore: transaction larger than the limit refused unread", metadata: ["bytes": "\(jws.utf8.count)"])
                continue
            }
            let submission = try await dependencies.intake.submit(
                signedTransaction: jws, source: .client, user: user, origin: context.origin(request), logger: context.logger
            )
            switch submission {
            case .accepted: restored += 1
            case .rejected(let reason):
                rejected += 1
                context.logger.notice("restore: transaction rejected", metadata: ["reason": "\(reason)"])
            case .deferred: rejected += 1
            }
        }
        let summary = try await dependencies.intake.summary(of: user, at: dependencies.now(), logger: context.logger)
        let active = summary.currentPremium.map { ActiveSubscriptionBody(product_id: $0.productID, expires_date: $0.accessEndsAt) }
        return try JSONBody.response(
            RestoreResponse(
                success: true, restored_count: restored, rejected_count: rejected, is_premium: summary.isPremium, active_subscription: active)
        )
    }

    func status(context: StoreLedgerRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let now = dependencies.now()
        let summary = try await dependencies.intake.summary(of: user, at: now, logger: context.logger)
        // The row that makes the user premium, else their latest subscription; purchases that grant nothing
        // (consumables) are not a subscription to show.
        guard let current = summary.currentPremium ?? summary.currentSubscription else {
            return try JSONBody.response(StatusResponse(has_subscription: false, source: "appstore", status: "none"))
        }
        return try JSONBody.response(
            StatusResponse(
                has_subscription: summary.isPremium, source: "appstore", status: current.statusNow,
                product_id: current.productID, expires_date: current.accessEndsAt, environment: current.environment
            )
        )
    }
}
