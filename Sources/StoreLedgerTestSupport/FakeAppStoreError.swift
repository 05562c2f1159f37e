/// The fake App Store Server API could not run.
package struct FakeAppStoreError: Error, CustomStringConvertible {
    /// What went wrong.
    package let description: String

    /// Creates the error.
    package init(_ description: String) { self.description = description }
}
