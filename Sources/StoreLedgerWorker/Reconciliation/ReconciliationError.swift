package import StoreLedgerAppStoreAPI

/// A reconciliation run that could not ask every environment: the others were asked, and what they gave was
/// appended (``result``).
package struct ReconciliationError: Error, Sendable, CustomStringConvertible {
    /// One environment of one app that failed.
    package struct Failure: Sendable, Equatable {
        /// The environment asked.
        package var environment: AppStoreAPIHost
        /// What went wrong (`String(reflecting:)` of the error; with the app first when several were asked).
        package var error: String
        /// The app asked (its bundle id).
        package var app: String = ""
        /// Whether Apple answered 401, as it does for Production before the app's first release (or for a key it refuses).
        package var unauthorized = false
    }

    /// The environments that failed, in the order asked.
    package var failures: [Failure]
    /// What the other environments gave.
    package var result: Reconciler.Result

    /// The failed environments and their errors.
    package var description: String {
        "reconciliation failed in " + failures.map { "\($0.environment.rawValue): \($0.error)" }.joined(separator: "; ")
    }
}
