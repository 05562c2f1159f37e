/// A rebuild stopped before swapping anything.
public struct RebuildError: Error, CustomStringConvertible, Sendable {
    /// What stopped it and what to check.
    public let description: String

    /// Creates the error.
    public init(_ description: String) {
        self.description = description
    }
}
