import Foundation
import Hummingbird
import Logging
import StoreLedgerAppStoreAPI
import StoreLedgerCore
import StoreLedgerProcessing
import StoreLedgerStore
import StoreLedgerVerification

/// Looking transactions up at Apple for the app-facing routes: the signed answer goes into the event log
/// (source `server_api`) and through the one handler, like anything an app posts.
struct AppStoreLookup: Sendable {
    /// The shared dependencies.
    let dependencies: AppAPIDependencies

    /// Where to ask.
    enum Scope {
        /// Production first, then sandbox when production does not know the transaction (or the app is not yet
        /// released there).
        case anyEnvironment
        /// One environment only.
        case only(AppStoreAPIHost)
    }

    /// Looks `transactionID` up and submits Apple's signed answer on behalf of `user`; nil when Apple knows no such
    /// transaction. Upstream failures become 503 answers with a stable code. The calls to Apple end within the
    /// dependencies' ``AppAPIDependencies/appStoreBudget`` (or an earlier deadline the caller set for several
    /// lookups: ``AppStoreAPIClient/withDeadline(_:_:)``).
    func submit(
        transactionID: String, scope: Scope, user: UserID?, request: Request, context: StoreLedgerRequestContext
    ) async throws -> PurchaseSubmission? {
        try await AppStoreAPIClient.withDeadline(dependencies.appStoreBudget) {
            try await submitWithinDeadline(transactionID: transactionID, scope: scope, user: user, request: request, context: context)
        }
    }

    private func submitWithinDeadline(
        transactionID: String, scope: Scope, user: UserID?, request: Request, context: StoreLedgerRequestContext
    ) async throws -> PurchaseSubmission? {
        guard let client = dependencies.appStore else {
            throw APIError(
                .serviceUnavailable, code: "app_store_api_not_configured",
                message: "looking transactions up needs APPSTORE_ISSUER_ID, APPSTORE_KEY_ID and APPSTORE_PRIVATE_KEY")
        }
        let answer: (jws: String, environment: AppStoreAPIHost)
        switch await Self.fetch(transactionID, scope: scope, client: client, logger: context.logger) {
        case .success(let fetched):
            answer = fetched
        case .failure(let error):
            if error.code == .transactionNotFound || error.code == .invalidTransactionID || error.code == .notFound { return nil }
            context.logger.warning("App Store Server API failed", metadata: ["error": "\(error)"])
            if error.code == .rateLimited {
                throw APIError(
                    .serviceUnavailable, code: "upstream_rate_limited", message: "Apple's App Store Server API is rate limiting us; retry later")
            }
            throw APIError(
                .serviceUnavailable, code: "upstream_unavailable",
                message: "Apple's App Store Server API could not answer (\(error.code)); retry later")
        }
        let (jws, environment) = answer
        let submission = try await dependencies.intake.submit(
            signedTransaction: jws, source: .serverAPI, environmentHint: environment.environmentHint, user: user, origin: context.origin(request),
            logger: context.logger
        )
        if case .accepted(let accepted) = submission, accepted.transaction.type == .autoRenewable,
            let originalID = accepted.transaction.originalTransactionID?.rawValue
        {
            try await submitLatestState(
                of: originalID, asking: transactionID, environment: environment,
                known: accepted.transaction.transactionID?.rawValue, client: client, request: request, context: context)
        }
        return submission
    }

    /// Get Transaction Info answers with the one transaction asked for, which may be a period long past (a client that
    /// sends its original transaction id, renewals whose notifications never arrived). For a subscription, Apple's Get
    /// All Subscription Statuses gives its latest transaction and renewal info: both are submitted too, so the row shows
    /// what Apple says now. A failure here leaves the lookup's answer as it was (it is logged), except a rebuild's swap
    /// (``StoreError/Code/rebuildSwapping``), which is passed on: the caller is asked to retry in a few seconds rather
    /// than answered from a period that may be long past.
    private func submitLatestState(
        of originalID: String, asking transactionID: String, environment: AppStoreAPIHost, known: String?,
        client: AppStoreAPIClient, request: Request, context: StoreLedgerRequestContext
    ) async throws {
        let statuses: SubscriptionStatusesResponse
        do {
            statuses = try await client.allSubscriptionStatuses(transactionID: transactionID, environment: environment, logger: context.logger)
        } catch {
            context.logger.notice(
                "App Store Server API: the subscription's latest state could not be read; the transaction asked for stands",
                metadata: ["original_transaction_id": "\(originalID)", "error": "\(String(reflecting: error))"])
            return
        }
        do {
            for latest in statuses.data.flatMap(\.lastTransactions) where latest.originalTransactionId == originalID {
                // Apple signs every answer anew: the transaction already submitted is known by its id, not its text.
                if let transaction = latest.signedTransactionInfo, SignedDataInspector.unverifiedString("transactionId", in: transaction) != known {
                    let submission = try await dependencies.intake.submit(
                        signedTransaction: transaction, source: .serverAPI, environmentHint: environment.environmentHint, user: nil,
                        origin: context.origin(request),
                        logger: context.logger)
                    if case .rejected(let reason) = submission {
                        context.logger.warning(
                            "App Store Server API: the subscription's latest transaction was rejected", metadata: ["reason": "\(reason)"])
                    }
                }
                if let renewalInfo = latest.signedRenewalInfo,
                    let reason = try await dependencies.intake.record(
                        signedRenewalInfo: renewalInfo, environmentHint: environment.environmentHint, origin: context.origin(request),
                        logger: context.logger)
                {
                    context.logger.warning(
                        "App Store Server API: the subscription's renewal info was not recorded", metadata: ["reason": "\(reason)"])
                }
            }
        } catch let error as StoreError where error.code == .rebuildSwapping {
            throw error
        } catch {
            context.logger.warning(
                "the subscription's latest state could not be recorded; the transaction asked for stands",
                metadata: ["original_transaction_id": "\(originalID)", "error": "\(String(reflecting: error))"])
        }
    }

    /// Asks Apple, as a result so callers can branch on the typed error.
    private static func fetch(
        _ transactionID: String, scope: Scope, client: AppStoreAPIClient, logger: Logger
    ) async -> Result<(jws: String, environment: AppStoreAPIHost), AppStoreAPIError> {
        do {
            switch scope {
            case .anyEnvironment:
                let found = try await client.transactionInfoAnyEnvironment(transactionID: transactionID, logger: logger)
                return .success((found.signedTransactionInfo, found.environment))
            case .only(let environment):
                return .success(
                    (try await client.transactionInfo(transactionID: transactionID, environment: environment, logger: logger), environment))
            }
        } catch {
            return .failure(error)
        }
    }
}
