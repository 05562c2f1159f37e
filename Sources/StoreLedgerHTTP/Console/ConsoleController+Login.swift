import Foundation
import Hummingbird
import Logging
import NIOPosix
import StoreLedgerStore

extension ConsoleController {
    /// `GET /console/login`: the sign-in forms (a signed-in browser goes on to the customers page). Sets the sign-in
    /// form's CSRF cookie when the browser has none.
    func loginPage(_ request: Request, context: some RequestContext) async throws -> Response {
        if try await signedIn(request) != nil { return Self.redirect("/console/customers") }
        return loginForm(request, status: .ok, error: nil, username: "")
    }

    /// The sign-in page with `error` (when given), keeping the browser's sign-in CSRF cookie or setting a new one.
    func loginForm(_ request: Request, status: HTTPResponse.Status, error: String?, username: String) -> Response {
        let existing = request.cookies[Self.loginCookie]?.value
        let token = existing.flatMap { ConsoleToken.isWellFormed($0) ? $0 : nil } ?? ConsoleToken.random()
        var values: [String: Any] = ["loginCSRF": token, "username": username]
        if let error { values["error"] = error }
        var response = render("login", status: status, session: nil, title: "Sign in", values)
        if token != existing { response.setCookie(cookie(Self.loginCookie, token, maxAge: 3_600)) }
        return response
    }

    /// `POST /console/login`: a console user's name and password, or an API key. 403 without the form's CSRF token;
    /// 429 with `Retry-After` past the sign-in attempts allowed (``signIns``); 401 with `#login-error` when the
    /// credentials are wrong; else a new session and 303 to the customers page. The password is hashed on NIO's thread
    /// pool, not on the tasks' cooperative threads, which the rest of the process (a receiver storing Apple's
    /// notifications, in `serve`) shares.
    func login(_ request: Request, context: some RequestContext) async throws -> Response {
        guard let form = try await checkedForm(request, expected: request.cookies[Self.loginCookie]?.value, session: nil) else {
            return forbidden(nil, "The sign-in form's security token is missing or wrong: reload the sign-in page and try again.")
        }
        let logger = context.logger
        let peer = (context as? any RemoteAddressRequestContext)?.remoteAddress
        let client = ClientAddressResolver.limitKey(clientAddresses.clientAddress(peer: peer, headers: request.headers))
        if case .limited(let seconds) = signIns.acquire(client, now: Date()) {
            logger.notice("console sign-in rate-limited", metadata: ["client": "\(client)", "retry_after": "\(seconds)"])
            var response = loginForm(
                request, status: .tooManyRequests, error: "Too many sign-in attempts: try again in \(seconds) s.", username: "")
            response.headers[.retryAfter] = String(seconds)
            return response
        }
        let principal: String
        let role: ConsoleRole
        var verifiedPasswordHash: String?
        if let key = form["api_key"]?.trimmingCharacters(in: .whitespacesAndNewlines), !key.isEmpty {
            if let admin = configuration.adminAPIKey, ConsoleToken.equal(key, admin) {
                (principal, role) = (ConsoleUserStore.adminKeyPrincipal(for: admin), .viewer)
            } else if let access = try await apiKeys.consoleAccess(of: key, logger: logger) {
                (principal, role) = (APIKeyStore.consolePrincipal(access.name), access.role)
            } else {
                logger.notice("console sign-in refused", metadata: ["with": "api key"])
                return loginForm(request, status: .unauthorized, error: "That API key is not valid (or was revoked).", username: "")
            }
        } else {
            let name = form["username"]?.trimmingCharacters(in: .whitespaces) ?? ""
            let password = form["password"] ?? ""
            let credentials = ConsoleUserStore.isValidName(name) ? try await users.credentials(of: name, logger: logger) : nil
            let verified = try await NIOThreadPool.singleton.runIfActive {
                guard let credentials else {
                    ConsolePassword.verifyNothing(password)
                    return false
                }
                return ConsolePassword.verify(password, against: credentials.passwordHash)
            }
            guard let credentials, verified else {
                // Not the name typed when it names no user: it may be a password typed in the wrong field.
                logger.notice("console sign-in refused", metadata: ["user": "\(credentials == nil ? "(unknown)" : name)"])
                return loginForm(request, status: .unauthorized, error: "Wrong name or password.", username: name)
            }
            (principal, role) = (name, credentials.role)
            verifiedPasswordHash = credentials.passwordHash
        }
        let token = ConsoleToken.random()
        guard
            try await sessions.create(
                token: token, principal: principal, role: role, lifetime: configuration.sessionLifetime,
                verifiedPasswordHash: verifiedPasswordHash, logger: logger)
        else {
            // The user was deleted, or its password or role replaced, while the password was being checked.
            logger.notice("console sign-in refused: the user changed meanwhile", metadata: ["user": "\(principal)"])
            return loginForm(request, status: .unauthorized, error: "Wrong name or password.", username: principal)
        }
        logger.notice("console sign-in", metadata: ["principal": "\(principal)", "role": "\(role.rawValue)"])
        return Self.redirect(
            "/console/customers",
            cookies: [cookie(Self.sessionCookie, token, maxAge: Int(configuration.sessionLifetime)), cookie(Self.loginCookie, "", maxAge: 0)]
        )
    }

    /// `POST /console/logout`: ends the session (CSRF-checked) and clears its cookie.
    func logout(_ request: Request, context: some RequestContext) async throws -> Response {
        guard let session = try await signedIn(request) else { return Self.redirect("/console/login") }
        guard try await checkedForm(request, expected: session.csrf, session: session) != nil else {
            return forbidden(session, "The form's security token is missing or wrong: reload the page and try again.")
        }
        try await sessions.delete(token: session.token, logger: context.logger)
        return Self.redirect("/console/login", cookies: [cookie(Self.sessionCookie, "", maxAge: 0)])
    }

    /// A console cookie: `HttpOnly; SameSite=Strict; Path=/console`.
    func cookie(_ name: String, _ value: String, maxAge: Int) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: "/console", secure: false, httpOnly: true, sameSite: .strict)
    }
}
