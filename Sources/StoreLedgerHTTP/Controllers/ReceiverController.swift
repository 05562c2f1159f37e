import Foundation
import HTTPTypes
package import Hummingbird
import Logging
import Metrics
import NIOCore
package import StoreLedgerCore
package import StoreLedgerStore

/// Receives App Store Server Notifications: stores each body byte for byte in the event log and
/// answers 200 only once the row is committed. It never verifies or projects (the worker does).
///
/// - 413 when the body is larger than ``ReceiverConfiguration/maximumBodySize``; 400 when it is not
///   a JSON object with a string `signedPayload`; nothing is stored in either case.
/// - 503 when the event could not be stored in time, so that Apple retries.
package struct ReceiverController: Sendable {
    /// The routes and the environment each implies: Apple's two URLs and the seeds' aliases.
    package static let routes: [(path: RouterPath, hint: EnvironmentHint?)] = [
        ("/notifications/apple", .production),
        ("/notifications/apple/sandbox", .sandbox),
        ("/api/v1/payments/appstore/webhook", nil),
        ("/api/iap/notifications", .production),
        ("/api/iap/notifications/sand", .sandbox),
    ]

    /// Where events are appended.
    package let log: EventLog
    /// Limits.
    package let configuration: ReceiverConfiguration

    private let stored = Counter(label: "storeledger_receiver_notifications_total", dimensions: [("result", "stored")])
    private let invalid = Counter(label: "storeledger_receiver_notifications_total", dimensions: [("result", "invalid")])
    private let tooLarge = Counter(label: "storeledger_receiver_notifications_total", dimensions: [("result", "too_large")])
    private let unavailable = Counter(label: "storeledger_receiver_notifications_total", dimensions: [("result", "unavailable")])

    /// Creates the controller.
    package init(log: EventLog, configuration: ReceiverConfiguration) {
        self.log = log
        self.configuration = configuration
    }

    /// Adds the notification routes to `router`.
    package func addRoutes(to router: Router<StoreLedgerRequestContext>) {
        for route in Self.routes {
            let hint = route.hint
            router.post(route.path) { request, context in
                try await receive(request, context: context, hint: hint)
            }
        }
    }

    /// Stores one notification.
    func receive(_ request: Request, context: StoreLedgerRequestContext, hint: EnvironmentHint?) async throws -> Response {
        let limit = configuration.maximumBodySize
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > limit {
            try refuseTooLarge("the body is \(declared) bytes; the limit is \(limit)", request: request, context: context)
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            try refuseTooLarge("the body exceeds the limit of \(limit) bytes", request: request, context: context)
        } catch let error as APIError {
            throw error  // the request's deadline passed (RequestDeadlineHandler): its own answer
        } catch let error as CancellationError {
            throw error
        } catch {
            // The client went away mid-body, or sent a body the HTTP parser refused (a broken chunk): nothing was
            // stored, and nothing failed on our side. Not a 500: those raise the "cannot store" alarm.
            invalid.increment()
            context.logger.notice("could not read a notification's body; nothing was stored", metadata: ["error": "\(String(reflecting: error))"])
            throw APIError(.badRequest, code: "invalid_request", message: "the request's body could not be read in full; nothing was stored")
        }
        do {
            _ = try NotificationEnvelope.parse(body.readableBytesView)
        } catch {
            invalid.increment()
            context.logger.notice("rejected a body that is not a notification", metadata: ["reason": "\(error.description)"])
            throw APIError(
                .badRequest, code: "invalid_notification",
                message: "\(error.description); expected a JSON object {\"signedPayload\": \"<compact JWS>\"}"
            )
        }
        let event = NewEvent(
            source: .appleNotification,
            environmentHint: hint,
            route: request.uri.path,
            body: body,
            remoteAddress: recordedAddress(request, context: context),
            contentType: request.headers[.contentType],
            userAgent: request.headers[.userAgent],
            requestID: context.requestID
        )
        let appended: AppendedEvent
        do {
            appended = try await withDeadline(configuration.storeTimeout) { [log, logger = context.logger] in
                try await log.append(event, logger: logger)
            }
        } catch {
            unavailable.increment()
            context.logger.error(
                "could not store a notification; answering 503 so Apple retries",
                metadata: [
                    "error": "\(String(reflecting: error))"
                ])
            throw APIError(.serviceUnavailable, code: "storage_unavailable", message: "the notification could not be stored; please retry")
        }
        stored.increment()
        context.logger.info("stored notification", metadata: ["event_id": "\(appended.id)"])
        let json = #"{"status":"stored","event_id":\#(appended.id)}"#
        return Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: json))
        )
    }

    /// Refuses a body over the limit (413): counted, and logged with who sent it, since Apple does not retry a 4xx and
    /// the notification is lost unless someone notices.
    private func refuseTooLarge(_ message: String, request: Request, context: StoreLedgerRequestContext) throws -> Never {
        tooLarge.increment()
        context.logger.notice(
            "refused a notification larger than the limit; raise RECEIVER_MAX_BODY_BYTES if it was Apple's",
            metadata: [
                "reason": "\(message)", "remote_address": "\(recordedAddress(request, context: context) ?? "unknown")",
                "user_agent": "\(request.headers[.userAgent] ?? "")",
            ])
        throw APIError(.contentTooLarge, code: "payload_too_large", message: message)
    }

    /// The address a notification's row records: the peer's `ip:port`, or, when the peer is a trusted proxy, the
    /// sender's address from `X-Forwarded-For` (``ReceiverConfiguration/clientAddresses``), so investigators see
    /// Apple's address rather than the load balancer's.
    private func recordedAddress(_ request: Request, context: StoreLedgerRequestContext) -> String? {
        guard let peer = context.remoteAddress else { return nil }
        let client = configuration.clientAddresses.clientAddress(peer: peer, headers: request.headers)
        return client == peer.ipAddress ? Self.describe(peer) : client
    }

    /// `ip:port` without NIO's decoration; an IPv6 address in brackets (`[2001:db8::5]:41000`), as in a URL, so its
    /// port cannot be read as the address's last group.
    package static func describe(_ address: SocketAddress) -> String {
        guard let ip = address.ipAddress, let port = address.port else { return "\(address)" }
        return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }
}
