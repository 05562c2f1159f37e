/// An App Store environment as it appears in signed payloads (`"Sandbox"`, `"Production"`, …).
///
/// An open string: values Apple may add later still decode and compare.
public struct VerificationEnvironment: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The exact string used in payloads, e.g. `Sandbox`.
    public let rawValue: String

    /// Wraps a payload environment string as-is (case-sensitive, like Apple's).
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Real purchases; `appAppleId` is required and checked.
    public static let production = Self(rawValue: "Production")
    /// Sandbox testers, TestFlight and App Review.
    public static let sandbox = Self(rawValue: "Sandbox")
    /// StoreKit testing in Xcode: signed by Xcode's local certificate, not by Apple.
    public static let xcode = Self(rawValue: "Xcode")
    /// Apple's local-testing environment: not signed by Apple either.
    public static let localTesting = Self(rawValue: "LocalTesting")

    /// Whether this environment's data is produced locally rather than signed by the App Store.
    public var isLocalTestEnvironment: Bool { self == .xcode || self == .localTesting }

    /// Parses a configuration value case-insensitively (`sandbox`, `Production`, `xcode`, `localtesting`).
    public init?(configurationValue value: String) {
        let known: [Self] = [.production, .sandbox, .xcode, .localTesting]
        guard let match = known.first(where: { $0.rawValue.lowercased() == value.lowercased() }) else {
            return nil
        }
        self = match
    }

    /// The raw value.
    public var description: String { rawValue }
}
