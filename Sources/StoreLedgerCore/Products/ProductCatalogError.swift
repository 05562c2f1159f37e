/// The product catalog file could not be read.
public struct ProductCatalogError: Error, CustomStringConvertible, Sendable {
    /// What is wrong with the file.
    public let detail: String

    /// Describes the problem.
    public var description: String { "product catalog: \(detail)" }
}
