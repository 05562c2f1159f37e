/// One app whose signed data this server accepts.
package struct AppIdentity: Hashable, Sendable {
    /// The app's bundle identifier, compared exactly with the payload's `bundleId`.
    package var bundleID: String
    /// The app's Apple ID (App Store Connect → App Information). Required when verifying Production data.
    package var appAppleID: Int64?

    /// Creates an app identity.
    package init(bundleID: String, appAppleID: Int64? = nil) {
        self.bundleID = bundleID
        self.appAppleID = appAppleID
    }
}
