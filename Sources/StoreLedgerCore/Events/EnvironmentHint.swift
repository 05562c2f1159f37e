/// The App Store environment a route implies (Apple's production or sandbox notification URL): a hint of
/// ``AppStoreEnvironment``, not another kind of environment.
///
/// Only a hint, kept for investigators: the signed payload's own `environment` decides.
public enum EnvironmentHint: String, Sendable, Hashable, Codable, CaseIterable {
    /// The production notification URL.
    case production
    /// The sandbox notification URL.
    case sandbox
}
