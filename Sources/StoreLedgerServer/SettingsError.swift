/// A setting that is missing or malformed, in the extensible-struct shape: new codes can be added without breaking
/// callers that switch on ``code``. Its description always starts with the setting's key.
package struct SettingsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with the setting.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case missing, malformed
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A required setting is not set.
        package static let missing = Code(.missing)
        /// A setting is set to a value that cannot be used (never silently replaced by a default).
        package static let malformed = Code(.malformed)

        /// The code's name.
        package var description: String { base.rawValue }
    }

    /// The error's code.
    package let code: Code
    /// The setting's key as the README's configuration table names it (`DATABASE_URL`).
    package let key: String
    /// A sentence for operators saying what is wrong and what to do.
    package let detail: String

    /// Creates an error about `key`, in the shape every error of the package shares: code, detail, then what is particular.
    package init(_ code: Code, _ detail: String, key: String) {
        self.code = code
        self.key = key
        self.detail = detail
    }

    /// `key: detail`, or `detail` alone when it already starts with the key.
    package var description: String { detail.hasPrefix(key) ? detail : "\(key): \(detail)" }
}
