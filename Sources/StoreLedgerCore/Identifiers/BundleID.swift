/// An app's bundle identifier (`bundleId`).
public struct BundleID: StringIdentifier {
    /// The identifier exactly as Apple sent it.
    public let rawValue: String

    /// Wraps a raw identifier string.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }
}
