package import Foundation
package import StoreLedgerCore

/// The envelope fields of a verified notification that routing and deduplication need.
package struct NotificationClaims: Hashable, Sendable {
    /// `notificationUUID`: deduplication key (Apple's retries repeat it).
    package let notificationUUID: String?
    /// `notificationType`, as an open string (`SUBSCRIBED`, `DID_RENEW`, …).
    package let notificationType: String?
    /// `subtype`, as an open string, when present.
    package let subtype: String?
    /// `version` (`2.0`).
    package let version: String?
    /// `signedDate`: ordering key.
    package let signedDate: Date?
    /// The environment from `data`, `summary`, `appData` or `externalPurchaseToken`.
    package let environment: AppStoreEnvironment?
    /// The bundle id from the same place.
    package let bundleID: String?
    /// The app Apple id from the same place.
    package let appAppleID: Int64?

    /// Creates a value; normally only a ``SignedDataVerifier`` does.
    package init(
        notificationUUID: String?,
        notificationType: String?,
        subtype: String?,
        version: String?,
        signedDate: Date?,
        environment: AppStoreEnvironment?,
        bundleID: String?,
        appAppleID: Int64?
    ) {
        self.notificationUUID = notificationUUID
        self.notificationType = notificationType
        self.subtype = subtype
        self.version = version
        self.signedDate = signedDate
        self.environment = environment
        self.bundleID = bundleID
        self.appAppleID = appAppleID
    }
}
