package import Foundation
import JWTKit
package import Logging
package import StoreLedgerHTTP

/// `dev`'s authentication: the configured one, or else a development secret kept in `.local/dev-auth-secret`
/// (made once) with `ADMIN_API_KEY=dev`, and a ready-made user token printed for curl.
package enum DevelopmentAuthentication {
    /// Where `dev` keeps its secret, relative to the working directory (the repository root under `swift run`).
    package static let defaultSecretFile = URL(fileURLWithPath: ".local/dev-auth-secret")

    /// The configuration `dev` runs the app-facing API with: `settings`' when it configures any, else the development
    /// secret in `file`.
    package static func configuration(
        _ settings: Settings, file: URL = defaultSecretFile, logger: Logger
    ) async throws -> AuthenticationConfiguration {
        var configuration = try settings.authentication()
        guard !configuration.isConfigured else { return configuration }
        let secret: String
        if let stored = try? String(contentsOf: file, encoding: .utf8), stored.utf8.count >= 32 {
            secret = stored.trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            secret = (0..<4).map { _ in UUID().uuidString }.joined()
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try secret.write(to: file, atomically: true, encoding: .utf8)
        }
        configuration.jwtSecret = secret
        configuration.adminAPIKey = "dev"
        let token = try await userToken(for: "dev-user", secret: secret)
        logger.notice(
            "development auth: users' tokens are HS256 with the secret in .local/dev-auth-secret; API key 'dev'",
            metadata: ["sample_user_token": "\(token)"]
        )
        return configuration
    }

    /// Claims of a development user token.
    private struct Claims: JWTPayload {
        var sub: SubjectClaim
        var exp: ExpirationClaim
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// An HS256 token for `user`, valid for a day.
    package static func userToken(for user: String, secret: String) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(Claims(sub: .init(value: user), exp: .init(value: Date().addingTimeInterval(86_400))))
    }
}
