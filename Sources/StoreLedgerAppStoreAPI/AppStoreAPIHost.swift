/// Which App Store Server API host to ask: the one serving Production data or the one serving Sandbox data (the
/// App Store environment itself is `AppStoreEnvironment`).
package enum AppStoreAPIHost: String, Sendable, CaseIterable, Hashable {
    /// `https://api.storekit.apple.com`
    case production = "Production"
    /// `https://api.storekit-sandbox.apple.com`
    case sandbox = "Sandbox"
}
