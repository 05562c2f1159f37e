/// A setting that is missing or malformed, in the extensible-struct shape: new codes can be added without breaking
/// callers that switch on ``code``. Its description always starts with the setting's key.
public struct SettingsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with the setting.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case missing, malformed
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A required setting is not set.
        public static let missing = Code(.missing)
        /// A setting is set to a value that cannot be used (never silently replaced by a default).
        public static let malformed = Code(.malformed)

        /// The code's name.
        public var description: String { base.rawValue }
    }

    /// The error's code.
    public let code: Code
    /// The setting's key as the README's configuration table names it (`DATABASE_URL`).
    public let key: String
    /// A sentence for operators saying what is wrong and what to do.
    public let detail: String

    /// Creates an error about `key`.
    public init(code: Code, key: String, detail: String) {
        self.code = code
        self.key = key
        self.detail = detail
    }

    /// `key: detail`, or `detail` alone when it already starts with the key.
    public var description: String { detail.hasPrefix(key) ? detail : "\(key): \(detail)" }
}
