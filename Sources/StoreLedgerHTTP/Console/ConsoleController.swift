import Foundation
import HTTPTypes
package import Hummingbird
import Logging
import NIOCore
package import PostgresNIO
import StoreLedgerStore

/// The web console (`CONSOLE=on`): server-rendered pages under `/console` on the admin listener for support (customer
/// lookup and timelines), operators (queue, events, requeue and replay, webhooks) and founders (charts).
///
/// Sign-in with a console user (`storeledger console-user create`) or an API key; sessions are random tokens in an
/// `HttpOnly; SameSite=Strict; Path=/console` cookie, stored as SHA-256 and expiring after `CONSOLE_SESSION_HOURS`;
/// every POST carries a CSRF token bound to the session (the sign-in form: to a pre-session cookie). Operator actions
/// go through ``OperatorStore`` exactly as the CLI's `requeue` and `replay`, recorded as `console:NAME`.
package struct ConsoleController: Sendable {
    /// The session cookie.
    static let sessionCookie = "storeledger_console"
    /// The sign-in form's CSRF cookie (double submit: the form's hidden field must equal it).
    static let loginCookie = "storeledger_console_login"
    /// The largest form body read.
    static let maximumFormBytes = 64 * 1024

    /// The logger session look-ups use (errors surface through the request's own logger).
    static let logger = Logger(label: "storeledger.console")

    /// The settings.
    package let configuration: ConsoleConfiguration
    let templates: ConsoleTemplates
    let users: ConsoleUserStore
    let sessions: ConsoleSessionStore
    let apiKeys: APIKeyStore
    let operators: OperatorStore
    let customers: CustomerLookupStore
    let webhooks: WebhookEndpoints
    let charts: ChartStore
    let chartCache: ChartCache
    /// Retakes the charts' snapshots in the background; run it beside the admin server.
    package let refresher: ConsoleChartRefresher
    /// A chart page takes a missing or outdated snapshot while it waits only on a ledger of at most this many
    /// transactions (well under a second); on a larger one it says the charts are being prepared, or shows the last.
    package var firstSnapshotWaitTransactions = 2_000
    /// Sign-in attempts allowed per client address and in all, per minute (``signInsPerAddressPerMinute``,
    /// ``signInsPerMinute``): a password is hashed 600,000 times for each, so unlimited guesses would be both a
    /// brute force and a way to keep the process's cores busy.
    package var signIns = ClientRateLimiter(perClient: signInsPerAddressPerMinute, total: signInsPerMinute)
    /// Who a sign-in comes from: the peer, or behind a trusted proxy (`TRUSTED_PROXIES`) its `X-Forwarded-For`.
    package var clientAddresses = ClientAddressResolver()
    /// Sign-in attempts per client address per minute.
    package static let signInsPerAddressPerMinute = 10
    /// Sign-in attempts per minute from everyone together.
    package static let signInsPerMinute = 60

    /// Creates the console over `client`; fails when its templates are missing from the build.
    package init(configuration: ConsoleConfiguration, client: PostgresClient) throws(ConsoleError) {
        self.configuration = configuration
        self.templates = try ConsoleTemplates()
        self.users = ConsoleUserStore(client: client)
        self.sessions = ConsoleSessionStore(client: client)
        self.apiKeys = APIKeyStore(client: client)
        self.operators = OperatorStore(client: client)
        self.customers = CustomerLookupStore(client: client)
        self.webhooks = WebhookEndpoints(client: client)
        self.charts = ChartStore(client: client)
        self.chartCache = ChartCache()
        self.refresher = ConsoleChartRefresher(store: charts, interval: .seconds(configuration.chartRefreshMinutes * 60), logger: Self.logger)
    }

    /// Adds the console's middleware and routes to `router` (call before the router's 405 middleware).
    package func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        router.add(middleware: ConsoleSecurityMiddleware<Context>())
        router.get("/console") { request, _ in
            Self.redirect(try await signedIn(request) == nil ? "/console/login" : "/console/customers")
        }
        router.get("/console/assets/console.css") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "private, max-age=300"],
                body: .init(byteBuffer: ByteBuffer(string: templates.stylesheet))
            )
        }
        router.get("/console/login") { request, context in try await loginPage(request, context: context) }
        router.post("/console/login") { request, context in try await login(request, context: context) }
        router.post("/console/logout") { request, context in try await logout(request, context: context) }
        router.get("/console/customers") { request, context in
            try await page(request, context: context) { session in try await customerSearch(request, session: session, context: context) }
        }
        router.get("/console/customers/{key}") { request, context in
            try await page(request, context: context) { session in try await customerPage(request, session: session, context: context) }
        }
        router.get("/console/queue") { request, context in
            try await page(request, context: context) { session in try await queuePage(session, context: context) }
        }
        router.get("/console/events/{id}") { request, context in
            try await page(request, context: context) { session in try await eventPage(request, session: session, context: context) }
        }
        router.post("/console/events/{id}/requeue") { request, context in try await operatorAction(.requeue, request, context: context) }
        router.post("/console/events/{id}/replay") { request, context in try await operatorAction(.replay, request, context: context) }
        router.get("/console/webhooks") { request, context in
            try await page(request, context: context) { session in try await webhooksPage(session, context: context) }
        }
        router.get("/console/charts") { request, context in
            try await page(request, context: context) { session in try await chartsPage(request, session: session, context: context) }
        }
        router.get("/console/charts/{file}") { request, context in
            try await page(request, context: context) { _ in try await chartCSV(request, context: context) }
        }
        // Anything else under /console: the sign-in page without a session, else a 404 page.
        for method in [HTTPRequest.Method.get, .post, .head] {
            router.on("/console/**", method: method) { request, context in
                try await page(request, context: context) { session in
                    render(
                        "message", status: .notFound, session: session, title: "Not found",
                        [
                            "heading": "Not found", "message": "There is no console page at \(request.uri.path).",
                        ])
                }
            }
        }
    }

    // MARK: - Sessions

    /// The live session the request's cookie names, or nil.
    func signedIn(_ request: Request) async throws -> ConsoleSignedIn? {
        guard let token = request.cookies[Self.sessionCookie]?.value, ConsoleToken.isWellFormed(token),
            let session = try await sessions.session(
                token: token, adminKeyPrincipal: configuration.adminAPIKey.map(ConsoleUserStore.adminKeyPrincipal(for:)), logger: Self.logger)
        else { return nil }
        return ConsoleSignedIn(principal: session.principal, role: session.role, token: token)
    }

    /// Runs `body` for a signed-in request; without a session, 303 to the sign-in page.
    func page(_ request: Request, context: some RequestContext, _ body: (ConsoleSignedIn) async throws -> Response) async throws -> Response {
        guard let session = try await signedIn(request) else { return Self.redirect("/console/login") }
        return try await body(session)
    }

    /// The form of a POST, after checking its `csrf_token` equals `expected` (403 when missing or wrong).
    func checkedForm(_ request: Request, expected: String?, session: ConsoleSignedIn?) async throws -> ConsoleForm? {
        let body = try await request.body.collect(upTo: Self.maximumFormBytes)
        let form = ConsoleForm(String(buffer: body))
        guard let expected, !expected.isEmpty, let given = form["csrf_token"], ConsoleToken.equal(given, expected) else { return nil }
        return form
    }

    /// The 403 answered to a POST whose CSRF token is missing or wrong, or that the role may not make.
    func forbidden(_ session: ConsoleSignedIn?, _ message: String) -> Response {
        render("message", status: .forbidden, session: session, title: "Forbidden", ["heading": "Forbidden", "message": message])
    }

    // MARK: - Rendering

    /// Renders page `template` with the layout's values (navigation, signed-in user, CSRF token) added to `values`.
    func render(
        _ template: String, status: HTTPResponse.Status = .ok, session: ConsoleSignedIn?, title: String, nav: String? = nil,
        _ values: [String: Any]
    ) -> Response {
        var context = values
        context["title"] = title
        if let session {
            context["session"] = true
            context["principal"] = session.principal
            context["role"] = session.role.rawValue
            context["csrf"] = session.csrf
            context["isOperator"] = session.role == .operator
        }
        if let nav { context["nav\(nav)"] = true }
        return Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: templates.render(template, context)))
        )
    }

    /// A 303 to `location`.
    static func redirect(_ location: String, cookies: [Cookie] = []) -> Response {
        var response = Response(status: .seeOther, headers: [.location: location])
        for cookie in cookies { response.setCookie(cookie) }
        return response
    }
}
