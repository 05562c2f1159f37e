package import StoreLedgerCore

/// Everything a ``SignedDataVerifier`` checks against: trusted roots, the apps, the accepted environments.
///
/// A payload is judged by the rules of the environment it is signed for (its own `environment`, once its signature
/// is verified): it must be one of ``environments``, and only Production data must carry the app's `appAppleId`.
package struct VerifierConfiguration: Hashable, Sendable {
    /// The default bound on cached (leaf, intermediate) chains.
    package static let defaultChainCacheCapacity = 64

    /// The apps whose data is accepted: a payload's `bundleId` must equal one of them.
    package var apps: [AppIdentity]
    /// The environments whose data is accepted: ``AppStoreEnvironment/sandbox``,
    /// ``AppStoreEnvironment/production`` or both. Xcode / LocalTesting data is governed by
    /// ``allowXcodeEnvironment`` instead.
    package var environments: [AppStoreEnvironment]
    /// How ``environments`` was configured, quoted in wrong-environment reasons (e.g. `APPLE_ENVIRONMENTS=Production`);
    /// nil quotes the list itself.
    package var environmentsSource: String?
    /// The roots an `x5c` chain must end in.
    package var trust: TrustConfiguration
    /// Accept `Xcode` / `LocalTesting` data without any chain or signature check. Development only.
    package var allowXcodeEnvironment: Bool
    /// How many verified (leaf, intermediate) pairs to remember; 0 disables the cache.
    package var chainCacheCapacity: Int

    /// The single environment of a one-environment configuration (the first of ``environments``); setting it
    /// accepts that environment only.
    package var environment: AppStoreEnvironment {
        get { environments.first ?? .sandbox }
        set { environments = [newValue] }
    }

    /// Creates a configuration accepting one environment.
    ///
    /// - Parameters:
    ///   - apps: The accepted apps. In Production every app needs its `appAppleID`.
    ///   - environment: `Sandbox` or `Production`.
    ///   - trust: Defaults to Apple Root CA - G3.
    ///   - allowXcodeEnvironment: Defaults to `false`.
    ///   - chainCacheCapacity: Defaults to ``defaultChainCacheCapacity``.
    package init(
        apps: [AppIdentity],
        environment: AppStoreEnvironment,
        trust: TrustConfiguration = .appleRootCAG3,
        allowXcodeEnvironment: Bool = false,
        chainCacheCapacity: Int = VerifierConfiguration.defaultChainCacheCapacity
    ) {
        self.init(
            apps: apps, environments: [environment], trust: trust, allowXcodeEnvironment: allowXcodeEnvironment,
            chainCacheCapacity: chainCacheCapacity
        )
    }

    /// Creates a configuration accepting several environments, each payload judged by the rules of its own.
    ///
    /// - Parameters:
    ///   - apps: The accepted apps. When Production is accepted every app needs its `appAppleID`.
    ///   - environments: `Sandbox`, `Production` or both.
    ///   - environmentsSource: How the list was configured, for rejection reasons.
    ///   - trust: Defaults to Apple Root CA - G3.
    ///   - allowXcodeEnvironment: Defaults to `false`.
    ///   - chainCacheCapacity: Defaults to ``defaultChainCacheCapacity``.
    package init(
        apps: [AppIdentity],
        environments: [AppStoreEnvironment],
        environmentsSource: String? = nil,
        trust: TrustConfiguration = .appleRootCAG3,
        allowXcodeEnvironment: Bool = false,
        chainCacheCapacity: Int = VerifierConfiguration.defaultChainCacheCapacity
    ) {
        self.apps = apps
        self.environments = environments
        self.environmentsSource = environmentsSource
        self.trust = trust
        self.allowXcodeEnvironment = allowXcodeEnvironment
        self.chainCacheCapacity = chainCacheCapacity
    }

    /// Checks the configuration is usable.
    ///
    /// - Throws: ``VerificationError/Code/invalidConfiguration`` when no app or no environment is configured, an
    ///   environment is not Sandbox or Production, or Production is accepted and an app lacks its `appAppleID`.
    package func validate() throws(VerificationError) {
        guard !apps.isEmpty else {
            throw .invalidConfiguration("no app configured: at least one bundle id is required")
        }
        guard !environments.isEmpty else {
            throw .invalidConfiguration("no environment is accepted: accept Sandbox, Production or both")
        }
        for environment in environments where environment != .sandbox && environment != .production {
            throw .invalidConfiguration(
                "environment must be Sandbox or Production, not '\(environment)' "
                    + "(Xcode and LocalTesting data is accepted with allowXcodeEnvironment)"
            )
        }
        if environments.contains(.production) {
            for app in apps where app.appAppleID == nil {
                throw .invalidConfiguration("app '\(app.bundleID)' needs its appAppleID to verify Production data")
            }
        }
        guard chainCacheCapacity >= 0 else {
            throw .invalidConfiguration("chainCacheCapacity must not be negative")
        }
    }

    /// How the accepted environments are described in rejection reasons.
    var acceptedEnvironmentsDescription: String {
        environmentsSource ?? "accepted: \(environments.map(\.rawValue).joined(separator: ", "))"
    }
}
