import Crypto

/// Fresh P-256 keys for tests.
enum P256Key {
    /// A new private key as PKCS#8 PEM.
    static func freshPEM() -> String { P256.Signing.PrivateKey().pemRepresentation }
}
