/// The App Store environment that signed a payload (`environment`), open to new values.
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
}
