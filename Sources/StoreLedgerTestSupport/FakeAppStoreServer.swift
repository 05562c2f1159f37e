import Crypto
import Foundation
import Hummingbird
import JWTKit
import Logging
import NIOCore
import ServiceLifecycle
package import StoreLedgerAppStoreAPI

/// A fake of Apple's App Store Server API: a real HTTP server on 127.0.0.1 (a free port) that checks every
/// request's ES256 token the way Apple does (key id, issuer, audience, bundle id, expiry) and answers from
/// ``FakeAppStoreState``. Production is served under `/production`, the sandbox under `/sandbox`; use
/// ``configuration(bundleID:)`` to point a client at it.
package struct FakeAppStoreServer: Sendable {
    /// The port it listens on.
    package let port: Int
    /// What it knows; script it from tests.
    package let state: FakeAppStoreState
    /// The key id clients must use.
    package let keyID: String
    /// The issuer id clients must use.
    package let issuerID: String
    /// The bundle id clients must put in `bid`.
    package let bundleID: String
    /// The private key clients sign with (PKCS#8 PEM).
    package let privateKeyPEM: String

    /// Page size of the paginated endpoints (Apple's is 20).
    package static let pageSize = 20

    /// A client configuration for this server with short backoffs.
    package func configuration(maximumAttempts: Int = 4) -> AppStoreAPIConfiguration {
        AppStoreAPIConfiguration(
            issuerID: issuerID, keyID: keyID, privateKeyPEM: privateKeyPEM, bundleID: bundleID,
            productionURL: "http://127.0.0.1:\(port)/production", sandboxURL: "http://127.0.0.1:\(port)/sandbox",
            requestTimeout: .seconds(15), maximumAttempts: maximumAttempts, initialBackoff: .milliseconds(5), maximumBackoff: .milliseconds(50)
        )
    }

    /// Starts a fake for `bundleID`, runs `body` with it, and stops it whatever happens.
    package static func withRunning<Result: Sendable>(
        bundleID: String = TestSigner.defaultBundleID, _ body: @Sendable (FakeAppStoreServer) async throws -> Result
    ) async throws -> Result {
        let key = P256.Signing.PrivateKey()
        let keyID = "FAKEKEY123"
        let issuerID = UUID().uuidString.lowercased()
        let state = FakeAppStoreState()
        let verifier = JWTKeyCollection()
        await verifier.add(ecdsa: try ES256PublicKey(pem: key.publicKey.pemRepresentation), kid: JWKIdentifier(string: keyID))
        let checker = TokenChecker(keys: verifier, keyID: keyID, issuerID: issuerID, bundleID: bundleID, state: state)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "fake-app-store")
        logger.logLevel = .critical
        let app = Application(
            router: router(state: state, checker: checker),
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "fake-app-store"),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        let group = ServiceGroup(services: [app], gracefulShutdownSignals: [], logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                defer { continuation.finish() }  // a server that fails before it runs ends the wait for its port
                try await group.run()
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else {
                await group.triggerGracefulShutdown()
                throw FakeAppStoreError("the fake App Store Server API did not start")
            }
            let server = FakeAppStoreServer(
                port: port, state: state, keyID: keyID, issuerID: issuerID, bundleID: bundleID, privateKeyPEM: key.pemRepresentation
            )
            do {
                let result = try await body(server)
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                return result
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
        }
    }

    /// Checks Apple-style bearer tokens.
    struct TokenChecker: Sendable {
        let keys: JWTKeyCollection
        let keyID: String
        let issuerID: String
        let bundleID: String
        let state: FakeAppStoreState

        struct Claims: JWTPayload {
            var iss: String
            var iat: Int64
            var exp: Int64
            var aud: String
            var bid: String
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }

        /// Whether `authorization` carries a token Apple would accept.
        func accepts(_ authorization: String?) async -> Bool {
            guard let authorization, authorization.hasPrefix("Bearer ") else { return false }
            let token = String(authorization.dropFirst("Bearer ".count))
            let parts = token.split(separator: ".").map(String.init)
            guard parts.count == 3, let headerData = Self.data(parts[0]), let claimsData = Self.data(parts[1]) else { return false }
            await state.logToken(header: headerData, claims: claimsData)
            let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any] ?? [:]
            guard header["kid"] as? String == keyID, header["alg"] as? String == "ES256" else { return false }
            guard let claims = try? await keys.verify(token, as: Claims.self) else { return false }
            let now = Int64(Date().timeIntervalSince1970)
            return claims.iss == issuerID && claims.aud == "appstoreconnect-v1" && claims.bid == bundleID
                && claims.exp > now && claims.iat <= now + 60 && claims.exp - claims.iat <= 3600
        }

        static func data(_ segment: String) -> Data? {
            var base64 = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while base64.count % 4 != 0 { base64 += "=" }
            return Data(base64Encoded: base64)
        }
    }

    private static func router(state: FakeAppStoreState, checker: TokenChecker) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        for environment in AppStoreAPIHost.allCases {
            let prefix = environment == .production ? "production" : "sandbox"
            let group = router.group(RouterPath(prefix))
            @Sendable func guarded(
                _ request: Request, _ path: String, _ answer: @Sendable () async throws -> Response
            ) async throws -> Response {
                let authorized = await checker.accepts(request.headers[.authorization])
                await state.log(.init(method: request.method.rawValue, path: path, environment: environment, authorized: authorized))
                guard authorized else { return error(401, code: nil, message: "Unauthorized") }
                if environment == .production, await state.productionUnreleased { return error(401, code: nil, message: "Unauthorized") }
                if let fault = await state.nextFault(), fault.status != 0 {
                    var response = error(fault.status, code: fault.appleErrorCode, message: "injected")
                    if let seconds = fault.retryAfterSeconds {
                        response.headers[.retryAfter] = String(Int64((Date().timeIntervalSince1970 + Double(seconds)) * 1000))
                    }
                    return response
                }
                return try await answer()
            }
            group.get("inApps/v1/transactions/:id") { request, context in
                let id = try context.parameters.require("id")
                return try await guarded(request, "/inApps/v1/transactions/\(id)") {
                    guard let jws = await state.transactions[environment]?[id] else {
                        return error(404, code: 4_040_010, message: "Transaction id not found.")
                    }
                    return try json(["signedTransactionInfo": jws])
                }
            }
            group.get("inApps/v2/history/:id") { request, context in
                let id = try context.parameters.require("id")
                let revision = request.uri.queryParameters.get("revision").flatMap(Int.init) ?? 0
                return try await guarded(request, "/inApps/v2/history/\(id)") {
                    guard let all = await state.histories[environment]?[id] else {
                        return error(404, code: 4_040_010, message: "Transaction id not found.")
                    }
                    let page = Array(all.dropFirst(revision).prefix(pageSize))
                    let next = revision + page.count
                    return try json(
                        TransactionHistoryPage(
                            revision: String(next), hasMore: next < all.count, bundleId: checker.bundleID, appAppleId: nil,
                            environment: environment.rawValue, signedTransactions: page
                        ))
                }
            }
            group.get("inApps/v1/subscriptions/:id") { request, context in
                let id = try context.parameters.require("id")
                if let hook = await state.hooks["/inApps/v1/subscriptions/\(id)"] { await hook() }
                return try await guarded(request, "/inApps/v1/subscriptions/\(id)") {
                    guard let answer = await state.statuses[environment]?[id] else {
                        return error(404, code: 4_040_010, message: "Transaction id not found.")
                    }
                    return try json(answer)
                }
            }
            group.post("inApps/v1/notifications/history") { request, context in
                let offset = request.uri.queryParameters.get("paginationToken").flatMap(Int.init) ?? 0
                let body = try await request.body.collect(upTo: 1 << 16)
                return try await guarded(request, "/inApps/v1/notifications/history") {
                    guard let asked = try? JSONDecoder().decode(NotificationHistoryRequest.self, from: Data(body.readableBytesView)) else {
                        return error(400, code: 4_000_000, message: "Invalid request.")
                    }
                    await state.logHistory(asked, environment: environment)
                    if await state.omitsPaginationToken {
                        return try json(NotificationHistoryPage(paginationToken: nil, hasMore: true, notificationHistory: []))
                    }
                    // Apple keeps 180 days of history in production, 30 in the sandbox, and refuses an older start.
                    let keptDays: Double = environment == .production ? 180 : 30
                    if Double(asked.startDate) < (Date().timeIntervalSince1970 - keptDays * 86_400) * 1000 {
                        return error(400, code: 4_000_012, message: "Start date is too far in the past.")
                    }
                    let all = await state.notifications[environment] ?? []
                    let page = Array(all.dropFirst(offset).prefix(pageSize))
                    let next = offset + page.count
                    return try json(
                        NotificationHistoryPage(
                            paginationToken: next < all.count ? String(next) : nil, hasMore: next < all.count, notificationHistory: page
                        ))
                }
            }
            group.post("inApps/v1/notifications/test") { request, _ in
                try await guarded(request, "/inApps/v1/notifications/test") {
                    await state.countTestNotification()
                    return try json(["testNotificationToken": UUID().uuidString.lowercased()])
                }
            }
        }
        return router
    }

    private static func json(_ value: some Encodable) throws -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(value)))
        )
    }

    private static func error(_ status: Int, code: Int?, message: String) -> Response {
        var object: [String: Any] = ["errorMessage": message]
        if let code { object["errorCode"] = code }
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        return Response(
            status: HTTPResponse.Status(code: status), headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }
}
