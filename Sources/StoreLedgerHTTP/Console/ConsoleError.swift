/// An error of the web console, in the extensible-struct shape: codes can be added without breaking callers.
public struct ConsoleError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of console error this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case configuration, templates, password
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A malformed setting (`CONSOLE`, `CONSOLE_SESSION_HOURS`).
        public static let configuration = Code(.configuration)
        /// The console's templates are missing from the build or do not parse.
        public static let templates = Code(.templates)
        /// A password that cannot be used (empty, too long) or a stored hash that cannot be read.
        public static let password = Code(.password)

        /// The code's name.
        public var description: String { base.rawValue }
    }

    /// The error's code.
    public let code: Code
    /// A sentence saying what happened and what to do.
    public let detail: String

    /// Creates an error.
    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// `code: detail`.
    public var description: String { "\(code): \(detail)" }
}
