import Crypto
import CryptoExtras
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JWTKit
import Logging
import NIOCore
import PostgresNIO
import StoreLedgerCore
import StoreLedgerHTTP
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

@Suite("App API: authentication")
struct AppAPIAuthenticationTests {
    static let pki = try! TestPKI()
    static let status = "/api/v1/payments/appstore/status"

    func code(_ response: TestResponse) throws -> String? {
        try AppAPIHarness.json(response)["code"] as? String
    }

    @Test func userRoutesRefuseMissingBadExpiredAndWrongKindsOfCredentials() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            try await harness.app.test(.router) { client in
                var response = try await client.execute(uri: Self.status, method: .get)
                #expect(response.status == .unauthorized)
                #expect(try code(response) == "unauthenticated")

                let expired = try await AppAPIHarness.token("alice", lifetime: -600)
                response = try await client.execute(uri: Self.status, method: .get, headers: [.authorization: "Bearer \(expired)"])
                #expect(response.status == .unauthorized)
                #expect(try code(response) == "token_expired")

                let wrongKey = try await AppAPIHarness.token("alice", secret: "another-secret-that-is-long-enough-for-hs256")
                response = try await client.execute(uri: Self.status, method: .get, headers: [.authorization: "Bearer \(wrongKey)"])
                #expect(response.status == .unauthorized)
                #expect(try code(response) == "invalid_token")

                // alg "none" with the same claims.
                let parts = try await AppAPIHarness.token("alice").split(separator: ".")
                let none = Data(#"{"alg":"none","typ":"JWT"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
                response = try await client.execute(uri: Self.status, method: .get, headers: [.authorization: "Bearer \(none).\(parts[1])."])
                #expect(response.status == .unauthorized)

                response = try await client.execute(uri: Self.status, method: .get, headers: [.authorization: "Basic YWxpY2U6cHc="])
                #expect(response.status == .unauthorized)
                #expect(try code(response) == "invalid_authorization")

                response = try await client.execute(uri: Self.status, method: .get, headers: AppAPIHarness.serviceHeaders)
                #expect(response.status == .forbidden)

                response = try await client.execute(uri: Self.status, method: .get, headers: try await AppAPIHarness.headers(user: "alice"))
                #expect(response.status == .ok)
            }
        }
    }

    /// The sign-in server's clock and this one's differ: a token is taken up to a minute past `exp` and from a minute
    /// before `nbf`, and refused beyond that.
    @Test func userTokensAreCheckedWithAMinuteOfClockSkewEitherWay() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            try await harness.app.test(.router) { client in
                func status(lifetime: TimeInterval, notBefore: TimeInterval? = nil) async throws -> (HTTPResponse.Status, String?) {
                    let token = try await AppAPIHarness.token("alice", lifetime: lifetime, notBefore: notBefore)
                    let response = try await client.execute(uri: Self.status, method: .get, headers: [.authorization: "Bearer \(token)"])
                    return (response.status, try code(response))
                }
                let justExpired = try await status(lifetime: -20)
                #expect(justExpired.0 == .ok)
                let issuedByAClockAhead = try await status(lifetime: 3600, notBefore: 20)
                #expect(issuedByAClockAhead.0 == .ok)
                let longExpired = try await status(lifetime: -120)
                #expect(longExpired.0 == .unauthorized)
                #expect(longExpired.1 == "token_expired")
                let notYetValid = try await status(lifetime: 3600, notBefore: 120)
                #expect(notYetValid.0 == .unauthorized)
                #expect(notYetValid.1 == "token_expired")
            }
        }
    }

    /// An existing sign-in server's tokens name the user their own way: `{"id": 42}` (an Express backend's
    /// `jwt.sign({id})`), `user_id`, a numeric `sub`. `AUTH_JWT_USER_CLAIM` names the claim; a whole number is the
    /// user of its digits; a claim that is absent, empty, fractional or not a string is refused.
    @Test func theUserIdIsTheConfiguredClaimAStringOrAWholeNumber() async throws {
        let secret = "a-host-sign-in-secret-of-at-least-32-bytes"
        /// The caller a token with these claims (and an expiry) proves, or the error it gets, with `userClaim` configured.
        func authenticate(_ claims: String, userClaim: String = "sub") async throws -> Result<Caller?, APIError> {
            let authenticator = try await Authenticator(
                configuration: AuthenticationConfiguration(jwtSecret: secret, jwtUserClaim: userClaim), apiKeys: nil)
            let expiry = Int(Date().timeIntervalSince1970) + 600
            let token = try Self.token(alg: "HS256", claims: #"{\#(claims),"exp":\#(expiry)}"#) { input in
                Data(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: Data(secret.utf8))))
            }
            do throws(APIError) {
                return .success(try await authenticator.authenticate([.authorization: "Bearer \(token)"], logger: Logger(label: "test")))
            } catch {
                return .failure(error)
            }
        }
        #expect(try await authenticate(#""sub":"alice""#).get() == .user(UserID("alice")))
        #expect(try await authenticate(#""sub":42"#).get() == .user(UserID("42")))
        #expect(try await authenticate(#""id":42,"iat":1"#, userClaim: "id").get() == .user(UserID("42")))
        #expect(try await authenticate(#""token_type":"access","user_id":"u-7""#, userClaim: "user_id").get() == .user(UserID("u-7")))
        // A user object signed whole (`jwt.sign({user: {id, email}})`): the member by its dotted path.
        #expect(
            try await authenticate(#""user":{"id":42,"email":"a@example.com"}"#, userClaim: "user.id").get() == .user(UserID("42")))
        let refused = [
            (#""id":42"#, "sub"), (#""sub":"""#, "sub"), (#""sub":4.5"#, "sub"), (#""sub":true"#, "sub"), (#""sub":"alice""#, "id"),
            (#""user":{"id":42}"#, "user"), (#""user":{"name":"a"}"#, "user.id"),
        ]
        for (claims, userClaim) in refused {
            guard case .failure(let error) = try await authenticate(claims, userClaim: userClaim) else {
                Issue.record("\(claims) with the user in \(userClaim) was accepted")
                continue
            }
            #expect(error.status == .unauthorized, "\(claims)")
            #expect(error.code == "invalid_token", "\(claims)")
            #expect(error.message.contains(userClaim), "\(claims): \(error.message)")
        }
    }

    @Test func serviceRoutesTakeTheAdminKeyAndStoredKeysButNotUsersOrRevokedKeys() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            let keys = APIKeyStore(client: db.client)
            let stored = try #require(try await keys.create(name: "billing-backend", logger: db.logger))
            // A name is taken once: a second key of that name is refused (nil), not a database error.
            #expect(try await keys.create(name: "billing-backend", logger: db.logger) == nil)
            let path = "/v1/users/alice/entitlements"
            try await harness.app.test(.router) { client in
                #expect(try await client.execute(uri: path, method: .get).status == .unauthorized)
                #expect(try await client.execute(uri: path, method: .get, headers: AppAPIHarness.serviceHeaders).status == .ok)
                #expect(try await client.execute(uri: path, method: .get, headers: [HTTPField.Name("X-API-Key")!: stored]).status == .ok)
                #expect(try await client.execute(uri: path, method: .get, headers: [.authorization: "Bearer \(stored)"]).status == .ok)
                let wrong = try await client.execute(uri: path, method: .get, headers: [HTTPField.Name("X-API-Key")!: "sl_nope"])
                #expect(wrong.status == .unauthorized)
                #expect(try code(wrong) == "invalid_api_key")
                #expect(
                    try await client.execute(uri: path, method: .get, headers: try await AppAPIHarness.headers(user: "alice")).status == .forbidden)
                #expect(try await keys.revoke(name: "billing-backend", logger: db.logger))
                #expect(try await client.execute(uri: path, method: .get, headers: [HTTPField.Name("X-API-Key")!: stored]).status == .unauthorized)
            }
            #expect(try await harness.count("SELECT count(*)::int8 FROM api_keys WHERE key_sha256 = sha256(convert_to(\(stored), 'UTF8'))") == 1)
        }
    }

    struct Claims: JWTPayload {
        var sub: SubjectClaim
        var exp: ExpirationClaim
        var iss: IssuerClaim?
        var aud: AudienceClaim?
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    @Test func es256AndRs256PublicKeysVerifyUserTokensAndIssuerAndAudienceAreChecked() async throws {
        let ecKey = ES256PrivateKey()
        let rsaBacking = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        for algorithm in ["ES256", "RS256"] {
            let publicPEM = algorithm == "ES256" ? ecKey.publicKey.pemRepresentation : rsaBacking.publicKey.pemRepresentation
            let signing = JWTKeyCollection()
            if algorithm == "ES256" {
                await signing.add(ecdsa: ecKey)
            } else {
                await signing.add(rsa: try Insecure.RSA.PrivateKey(backing: rsaBacking), digestAlgorithm: .sha256)
            }
            @Sendable func token(iss: String?, aud: String?) async throws -> String {
                try await signing.sign(
                    Claims(
                        sub: SubjectClaim(value: "user-\(algorithm)"), exp: .init(value: Date().addingTimeInterval(600)),
                        iss: iss.map { IssuerClaim(value: $0) }, aud: aud.map { AudienceClaim(value: [$0]) }
                    ))
            }
            try await TestDatabase.withFresh { db in
                let auth = AuthenticationConfiguration(jwtPublicKeyPEM: publicPEM, jwtIssuer: "https://auth.example", jwtAudience: "storeledger")
                let harness = try await AppAPIHarness(db, pki: Self.pki, auth: auth)
                try await harness.app.test(.router) { client in
                    let good = try await token(iss: "https://auth.example", aud: "storeledger")
                    #expect(try await client.execute(uri: Self.status, method: .get, headers: [.authorization: "Bearer \(good)"]).status == .ok)
                    let otherIssuer = try await token(iss: "https://evil.example", aud: "storeledger")
                    #expect(
                        try await client.execute(uri: Self.status, method: .get, headers: [.authorization: "Bearer \(otherIssuer)"]).status
                            == .unauthorized)
                    let otherAudience = try await token(iss: "https://auth.example", aud: "someone-else")
                    #expect(
                        try await client.execute(uri: Self.status, method: .get, headers: [.authorization: "Bearer \(otherAudience)"]).status
                            == .unauthorized)
                    // An HS256 token "signed" with the public key as the secret (algorithm confusion) is refused.
                    let confused = try await AppAPIHarness.token("user-\(algorithm)", secret: publicPEM)
                    #expect(
                        try await client.execute(uri: Self.status, method: .get, headers: [.authorization: "Bearer \(confused)"]).status
                            == .unauthorized)
                }
            }
        }
    }

    /// base64url without padding.
    static func base64URL(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A compact JWS whose header says `alg` over claims for `user`, signed by `sign` (whatever algorithm it really uses).
    static func token(alg: String, user: String, sign: (Data) throws -> Data) throws -> String {
        try token(alg: alg, claims: #"{"sub":"\#(user)","exp":\#(Int(Date().timeIntervalSince1970) + 600)}"#, sign: sign)
    }

    /// A compact JWS whose header says `alg` over the JSON `claims`, signed by `sign`.
    static func token(alg: String, claims: String, sign: (Data) throws -> Data) throws -> String {
        let input = "\(base64URL(Data(#"{"alg":"\#(alg)","typ":"JWT"}"#.utf8))).\(base64URL(Data(claims.utf8)))"
        return "\(input).\(base64URL(try sign(Data(input.utf8))))"
    }

    @Test func theHeaderAlgMustBeTheConfiguredKeysAlgorithmExactly() async throws {
        let secret = SymmetricKey(data: Data(AppAPIHarness.secret.utf8))
        let hs256: @Sendable (Data) -> Data = { Data(HMAC<SHA256>.authenticationCode(for: $0, using: secret)) }
        let ecKey = P256.Signing.PrivateKey()
        let es256: @Sendable (Data) throws -> Data = { try ecKey.signature(for: $0).rawRepresentation }
        let rsaKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let rs256: @Sendable (Data) throws -> Data = { try rsaKey.signature(for: $0, padding: .insecurePKCS1v1_5).rawRepresentation }
        let cases: [(auth: AuthenticationConfiguration, good: String, bad: [String], sign: @Sendable (Data) throws -> Data)] = [
            (.init(jwtSecret: AppAPIHarness.secret), "HS256", ["HS512", "HS384", "hs256", "ES256", "RS256", "none", ""], hs256),
            (.init(jwtPublicKeyPEM: ecKey.publicKey.pemRepresentation), "ES256", ["ES384", "ES512", "es256", "HS256", "RS256"], es256),
            (.init(jwtPublicKeyPEM: rsaKey.publicKey.pemRepresentation), "RS256", ["RS512", "RS384", "PS256", "HS256", "ES256"], rs256),
            (.init(jwtSecret: AppAPIHarness.secret, jwtPublicKeyPEM: ecKey.publicKey.pemRepresentation), "HS256", ["HS512", "ES256"], hs256),
            (.init(jwtSecret: AppAPIHarness.secret, jwtPublicKeyPEM: ecKey.publicKey.pemRepresentation), "ES256", ["ES512", "HS256"], es256),
        ]
        try await TestDatabase.withFresh { db in
            for testCase in cases {
                let harness = try await AppAPIHarness(db, pki: Self.pki, auth: testCase.auth)
                try await harness.app.test(.router) { client in
                    let good = try Self.token(alg: testCase.good, user: "alice", sign: testCase.sign)
                    let accepted = try await client.execute(uri: Self.status, method: .get, headers: [.authorization: "Bearer \(good)"])
                    #expect(accepted.status == .ok, "\(testCase.good) signed with its own key")
                    for alg in testCase.bad {
                        // The same signature bytes the configured key verifies, under a header that names another algorithm.
                        let mislabelled = try Self.token(alg: alg, user: "alice", sign: testCase.sign)
                        let response = try await client.execute(uri: Self.status, method: .get, headers: [.authorization: "Bearer \(mislabelled)"])
                        #expect(response.status == .unauthorized, "header \(alg) over a \(testCase.good) signature")
                        #expect(try code(response) == "invalid_token")
                    }
                }
            }
        }
    }

    @Test func unusableKeysAreConfigurationErrors() async throws {
        await #expect {
            _ = try await Authenticator(configuration: .init(jwtSecret: "short"), apiKeys: nil)
        } throws: { ($0 as? AuthenticationError)?.code == .weakSecret }
        await #expect {
            _ = try await Authenticator(
                configuration: .init(jwtPublicKeyPEM: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"), apiKeys: nil)
        } throws: { ($0 as? AuthenticationError)?.code == .unsupportedKey }
    }
}
