package import StoreLedgerCore

/// Which App Store Server API host to ask: the one serving Production data or the one serving Sandbox data (the
/// App Store environment itself is `AppStoreEnvironment`).
package enum AppStoreAPIHost: String, Sendable, CaseIterable, Hashable {
    /// `https://api.storekit.apple.com`
    case production = "Production"
    /// `https://api.storekit-sandbox.apple.com`
    case sandbox = "Sandbox"

    /// The host serving `environment`'s data; nil for Xcode and LocalTesting, whose data no host serves.
    package init?(_ environment: AppStoreEnvironment) {
        switch environment {
        case .production: self = .production
        case .sandbox: self = .sandbox
        default: return nil
        }
    }

    /// The environment hint an input this host answered with is stored under.
    package var environmentHint: EnvironmentHint { self == .sandbox ? .sandbox : .production }
}
