/// A legacy app receipt could not be read.
package struct AppReceiptError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What is wrong with it.
    package let description: String

    /// Creates the error.
    package init(_ description: String) {
        self.description = description
    }
}
