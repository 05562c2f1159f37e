package import Foundation
package import StoreLedgerCore

/// Verifies one piece of signed data of unknown kind and explains it: the logic behind `storeledger verify`.
///
/// Accepts a compact JWS (surrounding whitespace or quotes ignored) or a JSON body such as Apple's
/// `{"signedPayload": "…"}`; detects whether it is a notification, transaction, renewal info or app transaction;
/// verifies it with a ``SignedDataVerifier``; and renders the payload with nested JWS decoded in place.
package struct SignedDataInspector: Sendable {
    /// What to verify against. `nil` apps or environment mean "take them from the payload" (reported in
    /// ``VerificationReport/notes``): the chain and signature are still checked in full.
    package struct Options: Sendable {
        /// Trusted roots.
        package var trust: TrustConfiguration
        /// Accepted apps, or `nil` to accept the payload's own bundle id / app Apple id.
        package var apps: [AppIdentity]?
        /// Required environment, or `nil` to accept the payload's Sandbox or Production.
        package var environment: AppStoreEnvironment?
        /// Accept Xcode / LocalTesting data without chain or signature checks.
        package var allowXcodeEnvironment: Bool

        /// Creates options.
        package init(
            trust: TrustConfiguration = .appleRootCAG3,
            apps: [AppIdentity]? = nil,
            environment: AppStoreEnvironment? = nil,
            allowXcodeEnvironment: Bool = false
        ) {
            self.trust = trust
            self.apps = apps
            self.environment = environment
            self.allowXcodeEnvironment = allowXcodeEnvironment
        }
    }

    /// JSON body fields that may hold the signed data, in the order they are looked for.
    package static let bodyFields = [
        "signedPayload", "signedTransactionInfo", "signedTransaction", "signedRenewalInfo",
        "signedAppTransactionInfo", "signedAppTransaction",
    ]

    /// The options.
    package let options: Options

    /// Creates an inspector.
    package init(options: Options) {
        self.options = options
    }

    /// Extracts, classifies, verifies and renders `input`.
    ///
    /// - Throws: the ``VerificationError`` that rejected the data (or ``VerificationError/Code/malformed`` when no
    ///   signed data can be found in `input`).
    package func inspect(_ input: String) async throws(VerificationError) -> VerificationReport {
        let token = try Self.signedData(in: input)
        let jws = try CompactJWS(token)
        let claims = try jws.claims()
        let kind = Self.kind(ofPayload: jws.payloadJSON)
        let (configuration, notes) = configuration(for: kind, claims: claims)
        let verifier = try SignedDataVerifier(configuration: configuration)

        var notification: VerifiedNotification?
        var signedData: VerifiedSignedData?
        switch kind {
        case .notification:
            notification = try await verifier.verifyNotification(token)
        case .transaction:
            signedData = try await verifier.verifyTransaction(token)
        case .renewalInfo:
            signedData = try await verifier.verifyRenewalInfo(token)
        case .appTransaction:
            signedData = try await verifier.verifyAppTransaction(token)
        }
        let expanded = Self.expandedJSON(
            payloadJSON: jws.payloadJSON,
            nested: [
                ["data", "signedTransactionInfo"]: notification?.transaction,
                ["data", "signedRenewalInfo"]: notification?.renewalInfo,
                ["appData", "signedAppTransactionInfo"]: notification?.appTransaction,
            ]
        )
        return VerificationReport(
            kind: kind,
            configuration: configuration,
            notes: notes,
            notification: notification,
            signedData: signedData,
            expandedPayloadJSON: expanded
        )
    }

    /// The compact JWS in `input`: the trimmed text itself, or the first of ``bodyFields`` in a JSON object.
    package static func signedData(in input: String) throws(VerificationError) -> String {
        var text = trimmed(input)
        if text.hasPrefix("{") {
            let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
            guard let object else {
                throw .malformed("the input starts with '{' but is not a JSON object")
            }
            guard let value = bodyFields.lazy.compactMap({ object[$0] as? String }).first else {
                throw .malformed("the JSON body has none of \(bodyFields.joined(separator: ", "))")
            }
            text = trimmed(value)
        } else if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") {
            text = String(text.dropFirst().dropLast())
        }
        guard !text.isEmpty else {
            throw .malformed("the input is empty")
        }
        return text
    }

    /// `text` without the whitespace and newlines around it, looked for only at its two ends (Foundation's
    /// `trimmingCharacters` copies the whole text through UTF-16 first: a millisecond for a notification body, which
    /// `verify --benchmark --each-line` paid for each of its 20,000 lines before it started).
    static func trimmed(_ text: String) -> String {
        let scalars = text.unicodeScalars
        let isSpace = { (scalar: Unicode.Scalar) in CharacterSet.whitespacesAndNewlines.contains(scalar) }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(scalars[first...last])
    }

    /// Classifies a payload by its shape: notification fields first, then app-transaction-only fields, then a
    /// bundle id or transaction id (transactions), otherwise renewal info (which has no bundle id).
    package static func kind(ofPayload payloadJSON: Data) -> SignedDataKind {
        let object = ((try? JSONSerialization.jsonObject(with: payloadJSON)) as? [String: Any]) ?? [:]
        let has = { (keys: [String]) in keys.contains { object[$0] != nil } }
        if has(["notificationType", "notificationUUID", "data", "summary", "appData", "externalPurchaseToken"]) {
            return .notification
        }
        if has(["receiptType", "originalApplicationVersion", "applicationVersion", "receiptCreationDate"]),
            !has(["transactionId"])
        {
            return .appTransaction
        }
        if has(["transactionId", "bundleId", "purchaseDate"]) {
            return .transaction
        }
        return .renewalInfo
    }

    /// The verifier configuration for `kind`, filling what the options leave open from the payload.
    private func configuration(
        for kind: SignedDataKind,
        claims: SignedPayloadClaims
    ) -> (VerifierConfiguration, [String]) {
        let stated: (bundleID: String?, appAppleID: Int64?, environment: String?)
        switch kind {
        case .notification:
            let scope = claims.notificationScope
            stated = (scope.bundleId, scope.appAppleId, scope.environment)
        case .transaction:
            stated = (claims.bundleId, nil, claims.environment)
        case .renewalInfo:
            stated = (nil, nil, claims.environment)
        case .appTransaction:
            stated = (claims.bundleId, claims.appAppleId, claims.receiptType ?? claims.environment)
        }

        var notes: [String] = []
        let environment: AppStoreEnvironment
        if let required = options.environment {
            environment = required
        } else {
            let payloadEnvironment = stated.environment.map(AppStoreEnvironment.init(rawValue:))
            if let payloadEnvironment, payloadEnvironment == .sandbox || payloadEnvironment == .production {
                environment = payloadEnvironment
                notes.append("environment not checked: taken from the payload ('\(payloadEnvironment)')")
            } else {
                environment = .sandbox
            }
        }

        let apps: [AppIdentity]
        if let configured = options.apps, !configured.isEmpty {
            apps = configured
        } else {
            apps = [AppIdentity(bundleID: stated.bundleID ?? "", appAppleID: stated.appAppleID ?? 0)]
            if kind != .renewalInfo {
                notes.append("app not checked: bundle id / app Apple id taken from the payload")
            }
        }

        let configuration = VerifierConfiguration(
            apps: apps,
            environments: [environment],
            environmentsSource: options.environment.map { "--environment \($0)" },
            trust: options.trust,
            allowXcodeEnvironment: options.allowXcodeEnvironment,
            chainCacheCapacity: 4
        )
        return (configuration, notes)
    }

    /// The payload of the signed data in `input`, with nested JWS decoded in place, **without verifying anything**:
    /// for operators looking at what an event carries (`storeledger inspect`). Nil when no JWS can be decoded.
    package static func decodedWithoutVerifying(_ input: String) -> Data? {
        guard let token = try? signedData(in: input), let jws = try? CompactJWS(token) else { return nil }
        guard var object = (try? JSONSerialization.jsonObject(with: jws.payloadJSON)) as? [String: Any] else { return jws.payloadJSON }
        for section in ["data", "appData"] {
            guard var fields = object[section] as? [String: Any] else { continue }
            for (key, value) in fields where key.hasPrefix("signed") {
                if let nested = value as? String, let decoded = try? CompactJWS(nested),
                    let json = try? JSONSerialization.jsonObject(with: decoded.payloadJSON)
                {
                    fields[key] = json
                }
            }
            object[section] = fields
        }
        let options: JSONSerialization.WritingOptions = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try? JSONSerialization.data(withJSONObject: object, options: options)
    }

    /// The top-level string `key` of a JWS's payload, read **without verifying anything**: only to tell inputs apart
    /// before they are submitted and verified (a notification's `notificationUUID`, a transaction's `transactionId`).
    package static func unverifiedString(_ key: String, in jws: String) -> String? {
        guard let decoded = try? CompactJWS(jws), let object = (try? JSONSerialization.jsonObject(with: decoded.payloadJSON)) as? [String: Any]
        else { return nil }
        return object[key] as? String
    }

    /// Pretty JSON of `payloadJSON` with each verified nested JWS (by key path) replaced by its decoded payload.
    private static func expandedJSON(payloadJSON: Data, nested: [[String]: VerifiedSignedData?]) -> Data {
        guard var object = (try? JSONSerialization.jsonObject(with: payloadJSON)) as? [String: Any] else {
            return payloadJSON
        }
        for (path, verified) in nested {
            guard let verified, path.count == 2,
                var section = object[path[0]] as? [String: Any],
                let decoded = try? JSONSerialization.jsonObject(with: verified.payloadJSON)
            else { continue }
            section[path[1]] = decoded
            object[path[0]] = section
        }
        let options: JSONSerialization.WritingOptions = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? JSONSerialization.data(withJSONObject: object, options: options)) ?? payloadJSON
    }
}
