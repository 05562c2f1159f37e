/// Everything a ``SignedDataVerifier`` checks against: trusted roots, the apps, the environment.
public struct VerifierConfiguration: Hashable, Sendable {
    /// The default bound on cached (leaf, intermediate) chains.
    public static let defaultChainCacheCapacity = 64

    /// The apps whose data is accepted: a payload's `bundleId` must equal one of them.
    public var apps: [AppIdentity]
    /// The environment payloads must carry: ``VerificationEnvironment/sandbox`` or
    /// ``VerificationEnvironment/production`` (run one verifier per environment).
    public var environment: VerificationEnvironment
    /// The roots an `x5c` chain must end in.
    public var trust: TrustConfiguration
    /// Accept `Xcode` / `LocalTesting` data without any chain or signature check. Development only.
    public var allowXcodeEnvironment: Bool
    /// How many verified (leaf, intermediate) pairs to remember; 0 disables the cache.
    public var chainCacheCapacity: Int

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - apps: The accepted apps. In Production every app needs its `appAppleID`.
    ///   - environment: `Sandbox` or `Production`.
    ///   - trust: Defaults to Apple Root CA - G3.
    ///   - allowXcodeEnvironment: Defaults to `false`.
    ///   - chainCacheCapacity: Defaults to ``defaultChainCacheCapacity``.
    public init(
        apps: [AppIdentity],
        environment: VerificationEnvironment,
        trust: TrustConfiguration = .appleRootCAG3,
        allowXcodeEnvironment: Bool = false,
        chainCacheCapacity: Int = VerifierConfiguration.defaultChainCacheCapacity
    ) {
        self.apps = apps
        self.environment = environment
        self.trust = trust
        self.allowXcodeEnvironment = allowXcodeEnvironment
        self.chainCacheCapacity = chainCacheCapacity
    }

    /// Checks the configuration is usable.
    ///
    /// - Throws: ``VerificationError/Code/invalidConfiguration`` when no app is configured, the environment is not
    ///   Sandbox or Production, or a Production app lacks its `appAppleID`.
    public func validate() throws(VerificationError) {
        guard !apps.isEmpty else {
            throw .invalidConfiguration("no app configured: at least one bundle id is required")
        }
        guard environment == .sandbox || environment == .production else {
            throw .invalidConfiguration(
                "environment must be Sandbox or Production, not '\(environment)' "
                    + "(Xcode and LocalTesting data is accepted with allowXcodeEnvironment)"
            )
        }
        if environment == .production {
            for app in apps where app.appAppleID == nil {
                throw .invalidConfiguration("app '\(app.bundleID)' needs its appAppleID to verify Production data")
            }
        }
        guard chainCacheCapacity >= 0 else {
            throw .invalidConfiguration("chainCacheCapacity must not be negative")
        }
    }
}
