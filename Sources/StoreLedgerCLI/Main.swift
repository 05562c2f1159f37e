import ArgumentParser

/// TEMPORARY root command so `storeledger verify` can be tried on the `verify` branch.
/// The lead's `StoreLedgerCommand.swift` replaces this file: add `VerifyCommand.self` to its subcommands.
@main
struct TemporaryRootCommand: AsyncParsableCommand {
    /// The `storeledger` command and its subcommands.
    static let configuration = CommandConfiguration(
        commandName: "storeledger",
        abstract: "StoreLedger: App Store purchase events in, a subscription ledger out.",
        subcommands: [VerifyCommand.self]
    )
}
