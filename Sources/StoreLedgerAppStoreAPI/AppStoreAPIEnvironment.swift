/// Which App Store Server API host to ask.
public enum AppStoreAPIEnvironment: String, Sendable, CaseIterable, Hashable {
    /// `https://api.storekit.apple.com`
    case production = "Production"
    /// `https://api.storekit-sandbox.apple.com`
    case sandbox = "Sandbox"
}
