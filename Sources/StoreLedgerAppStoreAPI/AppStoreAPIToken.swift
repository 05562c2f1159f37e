import Foundation
import JWTKit

/// The claims of the ES256 token Apple requires on every App Store Server API request.
struct AppStoreAPIToken: JWTPayload {
    /// The issuer id.
    var iss: String
    /// Issued at (epoch seconds).
    var iat: Int64
    /// Expiry (epoch seconds; at most an hour after `iat`; we use 5 minutes).
    var exp: Int64
    /// Always `appstoreconnect-v1`.
    var aud: String
    /// The bundle id.
    var bid: String

    /// Nothing to verify: we only sign these.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
