/// The fake App Store Server API could not run.
public struct FakeAppStoreError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    /// Creates the error.
    public init(_ description: String) { self.description = description }
}
