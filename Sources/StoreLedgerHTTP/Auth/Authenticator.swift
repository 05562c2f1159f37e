import Crypto
import Foundation
public import HTTPTypes
import JWTKit
public import Logging
public import StoreLedgerStore
import StoreLedgerCore

/// Checks credentials: users' bearer JWTs with jwt-kit, and server-to-server API keys (`X-API-Key`, or a bearer
/// value that is not a JWT) against `ADMIN_API_KEY` and the `api_keys` table.
public struct Authenticator: Sendable {
    private let keys: JWTKeyCollection?
    private let configuration: AuthenticationConfiguration
    private let apiKeys: APIKeyStore?

    /// Builds the authenticator; throws an ``APIError``-free description when a configured key does not parse.
    public init(configuration: AuthenticationConfiguration, apiKeys: APIKeyStore?) async throws {
        self.configuration = configuration
        self.apiKeys = apiKeys
        guard configuration.jwtSecret != nil || configuration.jwtPublicKeyPEM != nil else {
            self.keys = nil
            return
        }
        let keys = JWTKeyCollection()
        if let secret = configuration.jwtSecret {
            guard secret.utf8.count >= 32 else {
                throw AuthenticationError("AUTH_JWT_SECRET must be at least 32 bytes (HS256 wants a key as long as its hash)")
            }
            await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256, kid: "hs256")
        }
        if let pem = configuration.jwtPublicKeyPEM {
            if let key = try? ES256PublicKey(pem: pem) {
                await keys.add(ecdsa: key, kid: "es256")
            } else if let key = try? Insecure.RSA.PublicKey(pem: pem) {
                await keys.add(rsa: key, digestAlgorithm: .sha256, kid: "rs256")
            } else {
                throw AuthenticationError("AUTH_JWT_PUBLIC_KEY is neither an EC P-256 (ES256) nor an RSA (RS256) public key in PEM")
            }
        }
        self.keys = keys
    }

    /// The caller the request's credentials prove, nil when it carries none, or an error answer (401) when they
    /// do not verify.
    public func authenticate(_ headers: HTTPFields, logger: Logger) async throws(APIError) -> Caller? {
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
            throw APIError(.unauthorized, code: "invalid_token", message: "user tokens are not accepted: no AUTH_JWT_SECRET or AUTH_JWT_PUBLIC_KEY is configured")
        }
        let claims: UserTokenClaims
        do {
            claims = try await keys.verify(token, as: UserTokenClaims.self, iteratingKeys: true)
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
        guard !claims.sub.value.isEmpty else {
            throw APIError(.unauthorized, code: "invalid_token", message: "the bearer token has an empty subject (sub)")
        }
        return UserID(claims.sub.value)
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
        let left = SHA256.hash(data: Data(lhs.utf8)), right = SHA256.hash(data: Data(rhs.utf8))
        return zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// The header carrying a server-to-server API key.
    public static let apiKeyHeader = HTTPField.Name("X-API-Key")!
}
