import Foundation
import JWTKit

/// The claims StoreLedger reads from a user's bearer JWT: `sub` is the user id; `exp` is required; `nbf`,
/// `iss` and `aud` are checked when present or configured. `exp` and `nbf` are checked with ``clockSkewLeeway``:
/// the host app's sign-in server and StoreLedger keep their own clocks, and a token issued with `nbf` = `iat` by a
/// server a second ahead would otherwise be refused the moment it is used (RFC 7519 allows "a small leeway").
struct UserTokenClaims: JWTPayload {
    /// How far the issuer's clock may be from this server's: a token is taken until `exp` + this, and from
    /// `nbf` − this.
    static let clockSkewLeeway: TimeInterval = 60

    /// The user id.
    var sub: SubjectClaim
    /// Expiry (required: a token that never expires is refused).
    var exp: ExpirationClaim
    /// Not valid before.
    var nbf: NotBeforeClaim?
    /// Issuer.
    var iss: IssuerClaim?
    /// Audience.
    var aud: AudienceClaim?

    /// Checks the time claims, with ``clockSkewLeeway`` either way.
    func verify(using algorithm: some JWTAlgorithm) async throws {
        let now = Date()
        try exp.verifyNotExpired(currentDate: now - Self.clockSkewLeeway)
        try nbf?.verifyNotBefore(currentDate: now + Self.clockSkewLeeway)
    }
}
