/// A legacy app receipt could not be read.
public struct AppReceiptError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What is wrong with it.
    public let description: String

    /// Creates the error.
    public init(_ description: String) {
        self.description = description
    }
}
