package import Configuration
import Foundation
import StoreLedgerAppStoreAPI
import StoreLedgerStore
import StoreLedgerVerification

/// The settings of a `storeledger` process, read through one swift-configuration ``ConfigReader``.
///
/// Keys are written as the README's configuration table names them (`DATABASE_URL`); the reader is asked for the
/// matching configuration key (`database.url`), which ``EnvironmentVariablesProvider`` maps back to the variable, and
/// an in-memory provider gives tests. A value that is set but malformed is a ``SettingsError`` naming the key, never
/// silently replaced by a default; an empty value counts as unset. Typed readers for each group of settings are in
/// `Settings+*.swift`.
package struct Settings: Sendable {
    /// Where every setting is read from.
    package let reader: ConfigReader

    /// Settings read through `reader`.
    package init(reader: ConfigReader) {
        self.reader = reader
    }

    /// The reader for the process environment, the one production uses.
    package static func environmentReader() -> ConfigReader {
        ConfigReader(provider: EnvironmentVariablesProvider())
    }

    /// The configuration key the reader is asked for `key` (`DATABASE_URL` → `database.url`).
    package static func configKey(_ key: String) -> ConfigKey {
        ConfigKey(key.lowercased().split(separator: "_").map(String.init))
    }

    /// A string value, or nil when unset or empty.
    package func string(_ key: String) -> String? {
        reader.string(forKey: Self.configKey(key)).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A whole number in `range`, `defaultValue` when unset.
    package func int(_ key: String, default defaultValue: Int, in range: ClosedRange<Int>) throws(SettingsError) -> Int {
        guard let text = string(key) else { return defaultValue }
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw SettingsError(.malformed, "\(key)=\(text) is not a whole number in \(range.lowerBound)...\(range.upperBound)", key: key)
        }
        return value
    }

    /// A boolean (`true`/`false`, `1`/`0`, `yes`/`no`, any case), `defaultValue` when unset.
    package func bool(_ key: String, default defaultValue: Bool) throws(SettingsError) -> Bool {
        guard let text = string(key) else { return defaultValue }
        switch text.trimmingCharacters(in: .whitespaces).lowercased() {
        case "1", "true", "yes": return true
        case "0", "false", "no": return false
        default: throw SettingsError(.malformed, "\(key)=\(text) is not true or false", key: key)
        }
    }

    /// A value that is required: throws ``SettingsError/Code/missing`` with `hint` when unset.
    package func required(_ key: String, _ hint: String) throws(SettingsError) -> String {
        guard let text = string(key) else { throw SettingsError(.missing, "\(key) is not set: \(hint)", key: key) }
        return text
    }

    /// Wraps an error thrown while interpreting `key`'s value, so that it names the key.
    func malformed(_ key: String, _ error: any Error) -> SettingsError {
        let text: String
        switch error {
        case let error as StoreError: text = error.detail
        case let error as VerificationError: text = error.detail
        case let error as AppStoreAPIError: text = error.detail
        default: text = String(describing: error)
        }
        return SettingsError(.malformed, text.contains(key) ? text : "\(key): \(text)", key: key)
    }
}
