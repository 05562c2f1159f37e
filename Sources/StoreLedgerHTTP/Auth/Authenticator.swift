import Crypto
import Foundation
package import HTTPTypes
import JWTKit
package import Logging
import StoreLedgerCore
package import StoreLedgerStore

/// Checks credentials: users' bearer JWTs with jwt-kit, and server-to-server API keys (`X-API-Key`, or a bearer
/// value that is not a JWT) against `ADMIN_API_KEY` and the `api_keys` table.
///
/// A user token's header `alg` must be exactly the algorithm of a configured key (`HS256` for `AUTH_JWT_SECRET`,
/// `ES256` or `RS256` for `AUTH_JWT_PUBLIC_KEY`), and only that key verifies it: jwt-kit verifies with the key's own
/// algorithm whatever the header says, so without this check a header claiming `HS512` over an HS256 signature
/// would pass.
package struct Authenticator: Sendable {
    /// The configured keys by the JWS `alg` they verify; nil when user tokens are not accepted.
    private let keys: [String: JWTKeyCollection]?
    private let configuration: AuthenticationConfiguration
    private let apiKeys: APIKeyStore?

    /// Builds the authenticator; throws an ``APIError``-free description when a configured key does not parse.
    package init(configuration: AuthenticationConfiguration, apiKeys: APIKeyStore?) async throws {
        self.configuration = configuration
        self.apiKeys = apiKeys
        guard configuration.jwtSecret != nil || configuration.jwtPublicKeyPEM != nil else {
            self.keys = nil
            return
        }
        var keys: [String: JWTKeyCollection] = [:]
        if let secret = configuration.jwtSecret {
            guard secret.utf8.count >= 32 else {
                throw AuthenticationError(.weakSecret, "AUTH_JWT_SECRET must be at least 32 bytes (HS256 wants a key as long as its hash)")
            }
            keys["HS256"] = await JWTKeyCollection().add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        }
        if let pem = configuration.jwtPublicKeyPEM {
            if let key = try? ES256PublicKey(pem: pem) {
                keys["ES256"] = await JWTKeyCollection().add(ecdsa: key)
            } else if let key = try? Insecure.RSA.PublicKey(pem: pem) {
                keys["RS256"] = await JWTKeyCollection().add(rsa: key, digestAlgorithm: .sha256)
            } else {
                throw AuthenticationError(.unsupportedKey, "AUTH_JWT_PUBLIC_KEY is neither an EC P-256 (ES256) nor an RSA (RS256) public key in PEM")
            }
        }
        self.keys = keys
    }

    /// The caller the request's credentials prove, nil when it carries none, or an error answer (401) when they
    /// do not verify.
    package func authenticate(_ headers: HTTPFields, logger: Logger) async throws(APIError) -> Caller? {
        if let key = headers[Self.apiKeyHeader] {
            return try await service(key, logger: logger)
        }
        guard let authorization = headers[.authorization] else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw APIError(.unauthorized, code: "invalid_authorization", message: "the Authorization header must be 'Bearer <token>'")
        }
        let credential = String(parts[1]).trimmingCharacters(in: .whitespaces)
        if credential.split(separator: ".", omittingEmptySubsequences: false).count != 3 {
            return try await service(credential, logger: logger)
        }
        return .user(try await user(credential, logger: logger))
    }

    private func user(_ token: String, logger: Logger) async throws(APIError) -> UserID {
        guard let keys else {
            throw APIError(
                .unauthorized, code: "invalid_token", message: "user tokens are not accepted: no AUTH_JWT_SECRET or AUTH_JWT_PUBLIC_KEY is configured"
            )
        }
        guard let algorithm = Self.headerAlgorithm(of: token) else {
            throw APIError(.unauthorized, code: "invalid_token", message: "the bearer token's header is not a JSON object with an alg")
        }
        guard let key = keys[algorithm] else {
            let shown = algorithm.count <= 16 && algorithm.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) ? algorithm : "its alg"
            let configured = keys.keys.sorted().joined(separator: ", ")
            throw APIError(
                .unauthorized, code: "invalid_token",
                message: "the bearer token's header names \(shown), not the configured key's algorithm (\(configured))"
            )
        }
        let claims: UserTokenClaims
        do {
            claims = try await key.verify(token, as: UserTokenClaims.self)
        } catch let error as JWTError where error.errorType == .claimVerificationFailure {
            throw APIError(.unauthorized, code: "token_expired", message: "the bearer token has expired or is not yet valid: sign in again")
        } catch {
            logger.debug("bearer token refused", metadata: ["error": "\(String(reflecting: error))"])
            throw APIError(.unauthorized, code: "invalid_token", message: "the bearer token is not a valid JWT signed with the configured key")
        }
        if let issuer = configuration.jwtIssuer, claims.iss?.value != issuer {
            throw APIError(.unauthorized, code: "invalid_token", message: "the bearer token was issued by someone else (iss)")
        }
        if let audience = configuration.jwtAudience, !(claims.aud?.value.contains(audience) ?? false) {
            throw APIError(.unauthorized, code: "invalid_token", message: "the bearer token is meant for another audience (aud)")
        }
        let claim = configuration.jwtUserClaim
        guard let user = claims.identifiers[claim], !user.isEmpty else {
            throw APIError(
                .unauthorized, code: "invalid_token",
                message: "the bearer token names no user in its \(claim) claim (a non-empty string or a whole number)")
        }
        return UserID(user)
    }

    /// The `alg` of a compact JWS's header, nil when the header is not base64url JSON with a string `alg`.
    static func headerAlgorithm(of token: String) -> String? {
        guard let encoded = token.split(separator: ".", omittingEmptySubsequences: false).first else { return nil }
        var base64 = encoded.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64),
            let header = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return header["alg"] as? String
    }

    private func service(_ key: String, logger: Logger) async throws(APIError) -> Caller {
        if let admin = configuration.adminAPIKey, Self.constantTimeEqual(key, admin) { return .service("admin") }
        if let apiKeys {
            do {
                if let name = try await apiKeys.name(of: key, logger: logger) { return .service(name) }
            } catch {
                logger.error("API key lookup failed", metadata: ["error": "\(String(reflecting: error))"])
                throw APIError(.serviceUnavailable, code: "storage_unavailable", message: "the API key could not be checked; try again")
            }
        }
        throw APIError(.unauthorized, code: "invalid_api_key", message: "the API key is not valid")
    }

    /// Compares digests so the time taken does not depend on where the strings differ.
    private static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = SHA256.hash(data: Data(lhs.utf8))
        let right = SHA256.hash(data: Data(rhs.utf8))
        return zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// The header carrying a server-to-server API key.
    package static let apiKeyHeader = HTTPField.Name("X-API-Key")!
}
