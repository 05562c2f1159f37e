/// How app-facing callers authenticate.
///
/// Environment keys (read by the `storeledger` command): `AUTH_JWT_SECRET` (HS256 shared secret),
/// `AUTH_JWT_PUBLIC_KEY` (PEM public key; ES256 or RS256), `AUTH_JWT_ISSUER` and `AUTH_JWT_AUDIENCE` (checked when
/// set), `AUTH_JWT_USER_CLAIM` (the claim holding the user id, default `sub`), `ADMIN_API_KEY` (a server-to-server
/// key; more live in the `api_keys` table).
package struct AuthenticationConfiguration: Sendable {
    /// The HS256 secret for users' bearer JWTs.
    package var jwtSecret: String?
    /// A PEM public key (EC P-256 for ES256, or RSA for RS256) for users' bearer JWTs.
    package var jwtPublicKeyPEM: String?
    /// The required `iss`, if any.
    package var jwtIssuer: String?
    /// The required `aud`, if any.
    package var jwtAudience: String?
    /// The claim that holds the user id: `sub` by default; another for tokens an existing sign-in server signs its
    /// own way (`id`, `user_id`). A string, or a whole number taken as its digits.
    package var jwtUserClaim: String
    /// A server-to-server API key accepted besides the `api_keys` table.
    package var adminAPIKey: String?

    /// Creates a configuration.
    package init(
        jwtSecret: String? = nil, jwtPublicKeyPEM: String? = nil, jwtIssuer: String? = nil, jwtAudience: String? = nil,
        jwtUserClaim: String = "sub", adminAPIKey: String? = nil
    ) {
        self.jwtSecret = jwtSecret
        self.jwtPublicKeyPEM = jwtPublicKeyPEM
        self.jwtIssuer = jwtIssuer
        self.jwtAudience = jwtAudience
        self.jwtUserClaim = jwtUserClaim
        self.adminAPIKey = adminAPIKey
    }

    /// Whether any way to authenticate is configured (otherwise the app-facing routes are not served).
    package var isConfigured: Bool { jwtSecret != nil || jwtPublicKeyPEM != nil || adminAPIKey != nil }
}
