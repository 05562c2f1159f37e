import JWTKit

/// The claims StoreLedger reads from a user's bearer JWT: `sub` is the user id; `exp` is required; `nbf`,
/// `iss` and `aud` are checked when present or configured.
struct UserTokenClaims: JWTPayload {
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

    /// Checks the time claims.
    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
        try nbf?.verifyNotBefore()
    }
}
