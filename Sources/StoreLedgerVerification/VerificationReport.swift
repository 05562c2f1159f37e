package import Foundation

/// What ``SignedDataInspector`` found: the kind, the verified data, and the payload with nested JWS decoded.
package struct VerificationReport: Sendable {
    /// The kind detected from the payload's shape.
    package let kind: SignedDataKind
    /// The configuration the data was verified against (including values taken from the payload).
    package let configuration: VerifierConfiguration
    /// Which checks were relaxed because the caller left them to the payload (e.g. no bundle id given).
    package let notes: [String]
    /// The verified notification, when ``kind`` is ``SignedDataKind/notification``.
    package let notification: VerifiedNotification?
    /// The verified transaction, renewal info or app transaction otherwise.
    package let signedData: VerifiedSignedData?
    /// The payload as pretty-printed JSON (sorted keys), each nested JWS replaced by its decoded payload.
    package let expandedPayloadJSON: Data

    /// Creates a report; normally only a ``SignedDataInspector`` does.
    package init(
        kind: SignedDataKind,
        configuration: VerifierConfiguration,
        notes: [String],
        notification: VerifiedNotification?,
        signedData: VerifiedSignedData?,
        expandedPayloadJSON: Data
    ) {
        self.kind = kind
        self.configuration = configuration
        self.notes = notes
        self.notification = notification
        self.signedData = signedData
        self.expandedPayloadJSON = expandedPayloadJSON
    }

    /// ``expandedPayloadJSON`` as text.
    package var expandedPayloadText: String {
        String(decoding: expandedPayloadJSON, as: UTF8.self)
    }
}
