package import StoreLedgerCore

/// Who is calling an app-facing route.
package enum Caller: Sendable, Equatable {
    /// A signed-in user of the host app (the user id claim of a verified bearer JWT: `sub`, or `AUTH_JWT_USER_CLAIM`).
    case user(UserID)
    /// A server-to-server client holding an API key (its name).
    case service(String)

    /// The user, when the caller is one.
    package var user: UserID? {
        if case .user(let id) = self { return id }
        return nil
    }
}
