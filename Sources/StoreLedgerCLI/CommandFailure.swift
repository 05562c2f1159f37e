/// A command that ran and could not do what it was asked (a name already taken, nothing by that name): printed as
/// `Error: …` with exit status 1, unlike a usage error (64), which also prints the command's usage.
struct CommandFailure: Error, CustomStringConvertible {
    /// What went wrong, for the operator.
    let description: String

    /// Creates the failure.
    init(_ description: String) { self.description = description }
}
