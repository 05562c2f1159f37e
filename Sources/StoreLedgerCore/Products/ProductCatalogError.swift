/// The product catalog file could not be read, in the extensible-struct shape every error of the package shares: new
/// codes can be added without breaking callers that switch on ``code``.
public struct ProductCatalogError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with the file.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case malformed, invalidProduct
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The file is not the catalog's JSON (a missing field, a wrong type, an unknown period).
        public static let malformed = Code(.malformed)
        /// A product entry is unusable: an empty product id, or a product listed twice.
        public static let invalidProduct = Code(.invalidProduct)

        /// The code's name.
        public var description: String { base.rawValue }
    }

    /// The error's code.
    public let code: Code
    /// What is wrong, naming the field or product.
    public let detail: String

    /// Creates an error with a code and detail.
    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// `product catalog: detail`.
    public var description: String { "product catalog: \(detail)" }
}
