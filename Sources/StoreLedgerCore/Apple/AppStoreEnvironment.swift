/// The App Store environment a payload is signed for (`environment`: `Sandbox`, `Production`, …), open to new values.
///
/// StoreLedger's one "environment": verification accepts or refuses data by it, the read model is keyed by it. (The
/// route a notification arrived on only hints at it: ``EnvironmentHint``; the process's settings are `Settings`.)
public struct AppStoreEnvironment: OpenStringValue {
    /// The raw value Apple sent.
    public let rawValue: String

    /// Wraps any raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The sandbox: App Review, TestFlight and sandbox testers.
    public static let sandbox = Self(rawValue: "Sandbox")

    /// The real App Store.
    public static let production = Self(rawValue: "Production")

    /// StoreKit testing in Xcode: unsigned test data, accepted only in development.
    public static let xcode = Self(rawValue: "Xcode")

    /// Local testing data, as in Apple's library examples: accepted only in development.
    public static let localTesting = Self(rawValue: "LocalTesting")

    /// Whether this environment's data is produced locally rather than signed by the App Store.
    public var isLocalTestEnvironment: Bool { self == .xcode || self == .localTesting }

    /// Parses a configuration value case-insensitively (`sandbox`, `Production`, `xcode`, `localtesting`); nil for
    /// any other.
    public init?(configurationValue value: String) {
        let known: [Self] = [.production, .sandbox, .xcode, .localTesting]
        guard let match = known.first(where: { $0.rawValue.lowercased() == value.lowercased() }) else {
            return nil
        }
        self = match
    }
}
