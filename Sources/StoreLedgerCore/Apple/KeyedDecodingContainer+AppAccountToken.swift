import Foundation

extension KeyedDecodingContainer {
    /// Decodes an `appAccountToken`, reading Apple's empty string (and whitespace) as no token.
    func decodeAppAccountTokenIfPresent(forKey key: Key) throws -> AppAccountToken? {
        guard let raw = try decodeIfPresent(String.self, forKey: key) else { return nil }
        let trimmed = raw.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty ? nil : AppAccountToken(trimmed)
    }
}
