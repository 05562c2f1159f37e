/// An error of the web console, in the extensible-struct shape: codes can be added without breaking callers.
package struct ConsoleError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of console error this is.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case configuration, templates, password
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A malformed setting (`CONSOLE`, `CONSOLE_SESSION_HOURS`).
        package static let configuration = Code(.configuration)
        /// The console's templates are missing from the build or do not parse.
        package static let templates = Code(.templates)
        /// A password that cannot be used (empty, too long) or a stored hash that cannot be read.
        package static let password = Code(.password)

        /// The code's name.
        package var description: String { base.rawValue }
    }

    /// The error's code.
    package let code: Code
    /// A sentence saying what happened and what to do.
    package let detail: String

    /// Creates an error.
    package init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// `code: detail`.
    package var description: String { "\(code): \(detail)" }
}
