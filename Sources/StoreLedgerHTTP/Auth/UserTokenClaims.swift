import Foundation
import JWTKit

/// The claims StoreLedger reads from a user's bearer JWT: the user id is the member ``AuthenticationConfiguration``
/// names (`sub` by default); `exp` is required; `nbf`, `iss` and `aud` are checked when present or configured. `exp`
/// and `nbf` are checked with ``clockSkewLeeway``: the host app's sign-in server and StoreLedger keep their own clocks,
/// and a token issued with `nbf` = `iat` by a server a second ahead would otherwise be refused the moment it is used
/// (RFC 7519 allows "a small leeway").
struct UserTokenClaims: JWTPayload {
    /// How far the issuer's clock may be from this server's: a token is taken until `exp` + this, and from
    /// `nbf` − this.
    static let clockSkewLeeway: TimeInterval = 60

    /// Expiry (required: a token that never expires is refused).
    var exp: ExpirationClaim
    /// Not valid before.
    var nbf: NotBeforeClaim?
    /// Issuer.
    var iss: IssuerClaim?
    /// Audience.
    var aud: AudienceClaim?
    /// The members that can name a user (``UserIDValue``), by name: a sign-in server that signs `{"id": 42}` or a
    /// numeric `sub` names user "42"; a member of a top-level object by its dotted path (`{"user": {"id": 42}}`:
    /// `user.id`, as an Express backend that signs its user object does).
    var identifiers: [String: String]

    /// A claim's name.
    private struct Name: CodingKey {
        /// The name.
        let stringValue: String
        /// None: claims are named.
        var intValue: Int? { nil }
        /// The claim `name`.
        init(_ name: String) { stringValue = name }
        /// The claim `stringValue`.
        init?(stringValue: String) { self.stringValue = stringValue }
        /// None: claims are named.
        init?(intValue: Int) { nil }
    }

    /// Reads the time and scope claims, and every member that can name a user.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Name.self)
        exp = try container.decode(ExpirationClaim.self, forKey: Name("exp"))
        nbf = try container.decodeIfPresent(NotBeforeClaim.self, forKey: Name("nbf"))
        iss = try container.decodeIfPresent(IssuerClaim.self, forKey: Name("iss"))
        aud = try container.decodeIfPresent(AudienceClaim.self, forKey: Name("aud"))
        var identifiers: [String: String] = [:]
        for name in container.allKeys {
            if let user = try? container.decode(UserIDValue.self, forKey: name) {
                identifiers[name.stringValue] = user.value
            } else if let object = try? container.nestedContainer(keyedBy: Name.self, forKey: name) {
                for member in object.allKeys {
                    if let user = try? object.decode(UserIDValue.self, forKey: member) {
                        identifiers[name.stringValue + "." + member.stringValue] = user.value
                    }
                }
            }
        }
        self.identifiers = identifiers
    }

    /// Writes the claims read, the identifiers as strings (`JWTPayload` is `Codable`; StoreLedger never signs user tokens).
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Name.self)
        for (name, value) in identifiers where !["exp", "nbf", "iss", "aud"].contains(name) { try container.encode(value, forKey: Name(name)) }
        try container.encode(exp, forKey: Name("exp"))
        try container.encodeIfPresent(nbf, forKey: Name("nbf"))
        try container.encodeIfPresent(iss, forKey: Name("iss"))
        try container.encodeIfPresent(aud, forKey: Name("aud"))
    }

    /// Checks the time claims, with ``clockSkewLeeway`` either way.
    func verify(using algorithm: some JWTAlgorithm) async throws {
        let now = Date()
        try exp.verifyNotExpired(currentDate: now - Self.clockSkewLeeway)
        try nbf?.verifyNotBefore(currentDate: now + Self.clockSkewLeeway)
    }
}
