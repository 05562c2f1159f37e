import Crypto
import Foundation
import StoreLedgerStore

/// The browser's session, once its cookie named a live one: who, with which role, and the CSRF token its forms carry.
struct ConsoleSignedIn: Sendable {
    /// A console user's name, `api-key:NAME` or `admin-api-key:` and the start of the admin key's SHA-256.
    var principal: String
    /// What the session may do.
    var role: ConsoleRole
    /// The session token from the cookie (never stored: the table has its SHA-256).
    var token: String

    /// The CSRF token of this session: HMAC-SHA256 of a constant keyed with the session token, so it is bound to
    /// the session, changes with it, and cannot be computed from anything the database holds.
    var csrf: String { Self.csrf(for: token) }

    /// The name operator actions are recorded under (`operator_actions.requested_by`).
    var operatorName: String { "console:\(principal)" }

    /// The CSRF token for session `token`.
    static func csrf(for token: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("storeledger-console-csrf".utf8), using: SymmetricKey(data: Data(token.utf8)))
        return ConsoleToken.base64URL(Data(mac))
    }
}
