package import Foundation
package import Logging
import NIOCore
import PostgresNIO
package import StoreLedgerCore
package import StoreLedgerStore

/// The app-facing side of the ledger: signed transactions posted by apps or fetched from the App Store Server
/// API go into the event log and through the one handler inline; the purchase is linked to its owner; the
/// user's entitlements are read back. HTTP-free, so the routes stay thin and tests can drive it directly.
///
/// Ownership: a transaction whose appAccountToken has a known owner (a purchase intent, or a token first seen
/// with a signed-in user) belongs to that owner; otherwise to the signed-in user who posted it. When a second
/// user claims a purchase, it is transferred to them (the latest claimant wins) and the transfer is recorded.
package struct PurchaseIntake: Sendable {
    /// Appends and processes inputs.
    package let processor: InlineProcessor
    /// Which products grant what (`PRODUCT_CATALOG`); `publishCatalog` writes it where `entitlements_at` reads it.
    package let catalog: ProductCatalog
    /// The app (bundle id) whose users this intake answers for (`APP_API_BUNDLE_ID`): what a user holds is read from
    /// that app's purchases only. Nil: every app's (one app's ledger). The processor's verifiers should accept this
    /// app only, so that a transaction of another app is refused rather than linked to this app's user.
    package let app: String?

    /// Creates the intake.
    package init(processor: InlineProcessor, catalog: ProductCatalog, app: String? = nil) {
        self.processor = processor
        self.catalog = catalog
        self.app = app
    }

    /// Where an input came from over HTTP, for the event log.
    package struct Origin: Sendable {
        /// The route it was posted to.
        package var route: String?
        /// The peer's address.
        package var remoteAddress: String?
        /// The request's `User-Agent`.
        package var userAgent: String?
        /// The request id.
        package var requestID: String?

        /// Creates an origin.
        package init(route: String? = nil, remoteAddress: String? = nil, userAgent: String? = nil, requestID: String? = nil) {
            self.route = route
            self.remoteAddress = remoteAddress
            self.userAgent = userAgent
            self.requestID = requestID
        }
    }

    /// Submits one signed transaction (JWS) on behalf of `user` (nil for server-to-server callers): appended
    /// with `source` (`client` when an app posted it, `server_api` when Apple's API returned it), verified,
    /// recorded, projected and linked in one transaction.
    package func submit(
        signedTransaction jws: String, source: EventSource, environmentHint: EnvironmentHint? = nil, user: UserID?,
        origin: Origin, logger: Logger
    ) async throws -> PurchaseSubmission {
        let key = source == .serverAPI ? "signedTransactionInfo" : "signedTransaction"
        let event = try Self.event([key: jws], source: source, environmentHint: environmentHint, user: user, origin: origin)
        return try await processor.process(event, logger: logger) { prepared, outcome, connection in
            switch outcome {
            case .reject(let reason): return .rejected(reason: reason)
            case .retry(let reason): return .deferred(reason: reason)
            case .done: break
            }
            guard case .signedData(let claimed, .transaction(let transaction), _) = prepared else {
                return .rejected(reason: "malformed: the signed data is not a transaction")
            }
            // The locks in the order every transaction takes them (``WebhookOutbox/enqueue(_:locking:on:logger:)``): the
            // row, its purchase's (a one-time purchase), then the token claims' (a claim) and `user_links` — so also when
            // the post projected nothing, or this would deadlock with a projection or another post of the same purchase.
            try await ReadModelStore.lock(
                [ReadModelStore.lockKey(of: transaction), ReadModelStore.purchaseLockKey(of: transaction)].compactMap { $0 }, on: connection,
                logger: logger)
            let environment = transaction.environment?.rawValue ?? ""
            let originalID = transaction.originalTransactionID?.rawValue ?? transaction.transactionID?.rawValue ?? ""
            var owner = user
            var claimedToken: String?
            if let token = transaction.appAccountToken?.rawValue, !token.isEmpty {
                if let tokenOwner = try await UserLinkStore.owner(ofToken: token, on: connection, logger: logger) {
                    owner = tokenOwner
                } else if let user {
                    let claim = try await UserLinkStore.claimToken(token, for: user, origin: "client", on: connection, logger: logger)
                    owner = claim.owner  // another user's, when they claimed it first meanwhile
                    if claim.claimed { claimedToken = token }
                }
            }
            var link: UserLinkChange?
            if let owner, !originalID.isEmpty {
                let change = try await UserLinkStore.link(
                    environment: environment, originalTransactionID: originalID, to: owner,
                    appAccountToken: transaction.appAccountToken?.rawValue.lowercased(), eventID: claimed.id,
                    reason: origin.route ?? source.rawValue, on: connection, logger: logger
                )
                try await WebhookOutbox.announce(change, of: transaction, causedBy: claimed.id, on: connection, logger: logger)
                link = change
            }
            // Other purchases carrying the token (their notifications came first) are the user's from now on, too.
            if let claimedToken {
                try await WebhookOutbox.announceClaim(ofToken: claimedToken, causedBy: claimed.id, on: connection, logger: logger)
            }
            let entitlement = try await EntitlementStore.entitlement(
                environment: environment, transactionID: transaction.transactionID?.rawValue ?? originalID, at: Date(), app: app,
                on: connection, logger: logger
            )
            return .accepted(.init(eventID: claimed.id, transaction: transaction, entitlement: entitlement, owner: owner, link: link))
        }
    }

    /// Records a renewal info Apple's API returned (source `server_api`): appended, verified, recorded and projected in
    /// one transaction, like a transaction; returns what the handler decided (`nil` when it was accepted, else why not).
    package func record(signedRenewalInfo jws: String, environmentHint: EnvironmentHint?, origin: Origin, logger: Logger) async throws -> String? {
        let event = try Self.event(["signedRenewalInfo": jws], source: .serverAPI, environmentHint: environmentHint, user: nil, origin: origin)
        return try await processor.process(event, logger: logger) { _, outcome, _ in
            switch outcome {
            case .done: return nil
            case .reject(let reason), .retry(let reason): return reason
            }
        }
    }

    /// The event that carries `body` (one signed value under its key), as the handler reads client and Server API bodies.
    private static func event(
        _ body: [String: String], source: EventSource, environmentHint: EnvironmentHint?, user: UserID?, origin: Origin
    ) throws -> NewEvent {
        NewEvent(
            source: source, environmentHint: environmentHint, route: origin.route,
            body: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])),
            remoteAddress: origin.remoteAddress, contentType: "application/json", userAgent: origin.userAgent,
            requestID: origin.requestID, userID: user?.rawValue
        )
    }

    /// What `user` holds at `date` in ``app``, as `entitlements_at(date)` says.
    package func summary(of user: UserID, at date: Date = Date(), logger: Logger) async throws -> EntitlementSummary {
        let entitlements = try await processor.client.withOpenConnection(logger: logger) { [app] connection in
            try await EntitlementStore.entitlements(of: user, at: date, app: app, on: connection, logger: logger)
        }
        return EntitlementSummary(entitlements, at: date)
    }

    /// The projected row of transaction `transactionID` in `environment` as of `date`, if any (of ``app``).
    package func entitlement(environment: String, transactionID: String, at date: Date = Date(), logger: Logger) async throws -> Entitlement? {
        try await processor.client.withOpenConnection(logger: logger) { [app] connection in
            try await EntitlementStore.entitlement(
                environment: environment, transactionID: transactionID, at: date, app: app, on: connection, logger: logger
            )
        }
    }

    /// Writes `catalog` to the database (`product_catalog`), where `entitlements_at` — and so every route, the
    /// webhooks and SQL readers — reads it. Run when the app-facing API starts.
    package func publishCatalog(logger: Logger) async throws {
        try await ProductCatalogStore.publish(catalog, client: processor.client, logger: logger)
    }
}
