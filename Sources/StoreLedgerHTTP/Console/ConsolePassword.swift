import Crypto
import CryptoExtras
import Foundation

/// Console passwords at rest: PBKDF2-HMAC-SHA256 with a random 16-byte salt and 600,000 rounds (OWASP's figure),
/// stored as `pbkdf2-sha256$ROUNDS$SALT$HASH` (base64), so the rounds can be raised later without invalidating
/// existing hashes.
package enum ConsolePassword {
    /// The rounds new hashes use.
    package static let rounds = 600_000
    /// The longest password accepted (PBKDF2 hashes any length; this bounds the work an attacker can ask for).
    package static let maximumLength = 1_024

    /// A new salted hash of `password`.
    package static func hash(_ password: String) throws(ConsoleError) -> String {
        try hash(password, rounds: rounds)
    }

    /// A new salted hash of `password` with `rounds` rounds (tests use fewer; production uses ``rounds``).
    package static func hash(_ password: String, rounds: Int) throws(ConsoleError) -> String {
        guard !password.isEmpty else { throw ConsoleError(.password, "the password is empty") }
        guard password.utf8.count <= maximumLength else { throw ConsoleError(.password, "the password is longer than \(maximumLength) bytes") }
        var generator = SystemRandomNumberGenerator()
        let salt = Data((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        let derived = try derive(password, salt: salt, rounds: rounds)
        return "pbkdf2-sha256$\(rounds)$\(salt.base64EncodedString())$\(derived.base64EncodedString())"
    }

    /// Whether `password` matches `stored` (compared in constant time). A hash that cannot be read matches nothing.
    package static func verify(_ password: String, against stored: String) -> Bool {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "pbkdf2-sha256", let rounds = Int(parts[1]), rounds >= 1, rounds <= 10_000_000,
            let salt = Data(base64Encoded: String(parts[2])), let expected = Data(base64Encoded: String(parts[3])), expected.count == 32,
            password.utf8.count <= maximumLength, let derived = try? derive(password, salt: salt, rounds: rounds)
        else { return false }
        return zip(derived, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// Spends the time a verification takes, for a sign-in whose user does not exist (so timing does not tell).
    package static func verifyNothing(_ password: String) {
        _ = verify(password, against: decoy)
    }

    private static let decoy = "pbkdf2-sha256$\(rounds)$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="

    private static func derive(_ password: String, salt: Data, rounds: Int) throws(ConsoleError) -> Data {
        do {
            let key = try KDF.Insecure.PBKDF2.deriveKey(
                from: Data(password.utf8), salt: salt, using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: rounds
            )
            return key.withUnsafeBytes { Data($0) }
        } catch {
            throw ConsoleError(.password, "PBKDF2 failed: \(error)")
        }
    }
}
