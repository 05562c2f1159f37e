package import Foundation
import JWTKit
import StoreLedgerCore

/// Verifies App Store signed data: notifications (with their nested JWS), transactions, renewal infos and app
/// transactions.
///
/// Each JWS must be compact ES256 with exactly three `x5c` certificates; `x5c[0]` → `x5c[1]` must chain to a
/// configured root (never to `x5c[2]` just because it is in the header) at the payload's `signedDate`, the leaf and
/// intermediate must carry Apple's marker OIDs and the intermediate must be a CA; the signature must match the
/// leaf's key; then the payload is judged by the rules of the environment it is signed for: that environment must be
/// one the configuration accepts, `bundleId` must be a configured app and, for Production data only, `appAppleId`
/// must be the app's Apple ID (Apple sends Sandbox data without one).
///
/// Offline mode only: chains are validated at `signedDate`, so stored history keeps verifying after certificates
/// expire. A `Sendable` value: share one instance; its chain cache is shared by all copies and is thread-safe.
package struct SignedDataVerifier: Sendable {
    /// What this verifier checks against.
    package let configuration: VerifierConfiguration
    /// jwt-kit's x5c chain validator over the configured roots.
    let x5cVerifier: X5CVerifier
    /// Validated (leaf, intermediate) pairs.
    let chainCache: ChainCache
    /// Headers already decoded, by their bytes.
    let recentHeaders = RecentHeaders(capacity: 8)
    /// The clock used when a payload carries no `signedDate` (as Apple's libraries do).
    let currentDate: @Sendable () -> Date

    /// Creates a verifier.
    ///
    /// - Parameters:
    ///   - configuration: Apps, environment, roots and options; validated here.
    ///   - currentDate: The validation time for a payload without `signedDate`; defaults to the system clock.
    /// - Throws: ``VerificationError/Code/invalidConfiguration`` when the configuration is unusable.
    package init(
        configuration: VerifierConfiguration,
        currentDate: @escaping @Sendable () -> Date = { Date() }
    ) throws(VerificationError) {
        try configuration.validate()
        self.configuration = configuration
        do {
            self.x5cVerifier = try X5CVerifier(rootCertificates: configuration.trust.rootCertificates)
        } catch {
            throw .invalidConfiguration("cannot set up chain validation: \(error)")
        }
        self.chainCache = ChainCache(capacity: configuration.chainCacheCapacity)
        self.currentDate = currentDate
    }

    /// Counters of the chain cache (hits, full chain validations, entries).
    package var chainCacheStatistics: ChainCacheStatistics {
        chainCache.statistics
    }

    /// Verifies a notification's `signedPayload` and every JWS nested in it.
    ///
    /// App and environment are read from whichever of `data`, `summary`, `appData` or `externalPurchaseToken` the
    /// payload carries (for `externalPurchaseToken`: Sandbox iff `externalPurchaseId` starts with `SANDBOX`).
    /// `data.signedTransactionInfo`, `data.signedRenewalInfo` and `appData.signedAppTransactionInfo` are verified
    /// as separate JWS; a failure there fails the notification, its detail prefixed with the field's path.
    package func verifyNotification(_ signedPayload: String) async throws(VerificationError) -> VerifiedNotification {
        let outer = try await authenticate(signedPayload, as: .notification, environmentOf: { $0.notificationScope.environment })
        // Genuine, but of a shape this version does not read (a notification type Apple adds that carries a section
        // of a new name): said so, not as the wrong app its missing bundleId would otherwise read as.
        let outerClaims = outer.claims
        guard outerClaims.data != nil || outerClaims.summary != nil || outerClaims.appData != nil || outerClaims.externalPurchaseToken != nil
        else {
            throw .malformed(
                "the notification (\(outerClaims.notificationType ?? "no notificationType")) carries none of data, summary, appData or "
                    + "externalPurchaseToken, a shape this version does not read: the log keeps it; requeue it (storeledger requeue "
                    + "--rejected malformed) once a version that reads it runs")
        }
        let scope = outerClaims.notificationScope
        try checkClaims(
            bundleID: scope.bundleId, appAppleID: scope.appAppleId, environment: scope.environment,
            isLocalTestData: outer.isLocalTestData, checksAppAppleID: true
        )

        var transaction: VerifiedSignedData?
        if let nested = outer.claims.data?.signedTransactionInfo {
            do {
                let verified = try await authenticatedTransaction(nested)
                try Self.checkSameEnvironment(nested: verified.environment, outer: scope.environment)
                try Self.checkSameApp(nestedBundleID: verified.claims.bundleId, outerBundleID: scope.bundleId)
                transaction = verified.result
            } catch {
                throw error.prefixed("data.signedTransactionInfo")
            }
        }
        var renewalInfo: VerifiedSignedData?
        if let nested = outer.claims.data?.signedRenewalInfo {
            do {
                let verified = try await authenticatedRenewalInfo(nested)
                try Self.checkSameEnvironment(nested: verified.environment, outer: scope.environment)
                renewalInfo = verified.result
            } catch {
                throw error.prefixed("data.signedRenewalInfo")
            }
        }
        var appTransaction: VerifiedSignedData?
        if let nested = outer.claims.appData?.signedAppTransactionInfo {
            do {
                let verified = try await authenticatedAppTransaction(nested)
                try Self.checkSameEnvironment(nested: verified.environment, outer: scope.environment)
                try Self.checkSameApp(nestedBundleID: verified.claims.bundleId, outerBundleID: scope.bundleId)
                appTransaction = verified.result
            } catch {
                throw error.prefixed("appData.signedAppTransactionInfo")
            }
        }

        let claims = NotificationClaims(
            notificationUUID: outer.claims.notificationUUID,
            notificationType: outer.claims.notificationType,
            subtype: outer.claims.subtype,
            version: outer.claims.version,
            signedDate: outer.signedDate,
            environment: scope.environment.map(AppStoreEnvironment.init(rawValue:)),
            bundleID: scope.bundleId,
            appAppleID: scope.appAppleId
        )
        return VerifiedNotification(
            signedPayload: signedPayload,
            payloadJSON: outer.jws.payloadJSON,
            claims: claims,
            transaction: transaction,
            renewalInfo: renewalInfo,
            appTransaction: appTransaction,
            isLocalTestData: outer.isLocalTestData,
            signingInputDigest: Array(outer.signingInputDigest),
            decoded: outer.decoded
        )
    }

    /// Verifies a signed transaction (`JWSTransaction`): chain, signature, `environment` and `bundleId`.
    package func verifyTransaction(_ signedTransaction: String) async throws(VerificationError) -> VerifiedSignedData {
        try await authenticatedTransaction(signedTransaction).result
    }

    /// Verifies a signed renewal info (`JWSRenewalInfo`): chain, signature and `environment` (it has no bundle id).
    package func verifyRenewalInfo(_ signedRenewalInfo: String) async throws(VerificationError) -> VerifiedSignedData {
        try await authenticatedRenewalInfo(signedRenewalInfo).result
    }

    /// Verifies a signed app transaction (`AppTransaction`): chain, signature, its environment (which app
    /// transactions call `receiptType`), `bundleId` and, in Production, `appAppleId`.
    package func verifyAppTransaction(
        _ signedAppTransaction: String
    ) async throws(VerificationError) -> VerifiedSignedData {
        try await authenticatedAppTransaction(signedAppTransaction).result
    }
}

extension SignedDataVerifier {
    /// ``verifyTransaction(_:)`` keeping the claims.
    func authenticatedTransaction(_ token: String) async throws(VerificationError) -> AuthenticatedJWS {
        let verified = try await authenticate(token, as: .transaction, environmentOf: { $0.environment })
        try checkClaims(
            bundleID: verified.claims.bundleId, appAppleID: nil, environment: verified.environment,
            isLocalTestData: verified.isLocalTestData, checksAppAppleID: false
        )
        return verified
    }

    /// ``verifyRenewalInfo(_:)`` keeping the claims.
    func authenticatedRenewalInfo(_ token: String) async throws(VerificationError) -> AuthenticatedJWS {
        let verified = try await authenticate(token, as: .renewalInfo, environmentOf: { $0.environment })
        try checkEnvironment(verified.environment, isLocalTestData: verified.isLocalTestData)
        return verified
    }

    /// ``verifyAppTransaction(_:)`` keeping the claims.
    func authenticatedAppTransaction(_ token: String) async throws(VerificationError) -> AuthenticatedJWS {
        let verified = try await authenticate(token, environmentOf: { $0.receiptType ?? $0.environment })
        try checkClaims(
            bundleID: verified.claims.bundleId, appAppleID: verified.claims.appAppleId, environment: verified.environment,
            isLocalTestData: verified.isLocalTestData, checksAppAppleID: true
        )
        return verified
    }
}
