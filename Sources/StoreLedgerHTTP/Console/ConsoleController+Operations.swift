import Foundation
import Hummingbird
import Logging
import NIOCore
import StoreLedgerCore
import StoreLedgerStore

extension ConsoleController {
    /// What an operator asks for on an event page.
    enum OperatorAction: String, Sendable {
        /// `storeledger requeue EVENT_ID --reason WHY`.
        case requeue
        /// `storeledger replay --from EVENT_ID --to EVENT_ID --reason WHY`.
        case replay
    }

    /// The newest parked events the queue page lists.
    static let problemLimit = 50

    /// `GET /console/queue`: depth by state, oldest pending age, throughput, rejections by reason, parked events.
    func queuePage(_ session: ConsoleSignedIn, context: some RequestContext) async throws -> Response {
        let statistics = try await operators.statistics(logger: context.logger)
        let problems = try await operators.problemEvents(limit: Self.problemLimit, logger: context.logger)
        let known = QueueState.allCases.map(\.rawValue)
        let states = known + statistics.depth.keys.filter { !known.contains($0) }.sorted()
        let byCount: ([String: Int]) -> [[String: Any]] = { classes in
            classes.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { ["reason": $0.key, "count": $0.value] }
        }
        return render(
            "queue", session: session, title: "Queue", nav: "Queue",
            [
                "depth": states.map {
                    ["state": $0, "count": statistics.depth[$0] ?? 0, "estimated": $0 == "done" && statistics.doneIsEstimated] as [String: Any]
                },
                "oldestPending": ConsoleFormat.age(statistics.oldestPendingAgeSeconds),
                "oldestRequeued": ConsoleFormat.age(statistics.oldestRequeuedAgeSeconds),
                "finished": statistics.finishedLastMinute, "received": statistics.receivedLastMinute,
                "rejections": byCount(statistics.rejectedByReason), "dead": byCount(statistics.deadByError),
                "problemLimit": Self.problemLimit,
                "problems": problems.map { problem -> [String: Any] in
                    [
                        "id": problem.id, "state": problem.state, "reason": problem.reason ?? "—", "attempts": problem.attempts,
                        "receivedAt": ConsoleFormat.time(problem.receivedAt), "finishedAt": ConsoleFormat.time(problem.finishedAt),
                    ]
                },
            ])
    }

    /// `GET /console/events/{id}`: one event's whole story; operators also get the requeue and replay forms.
    func eventPage(
        _ request: Request, session: ConsoleSignedIn, context: some RequestContext, status: HTTPResponse.Status = .ok, formError: String? = nil
    ) async throws -> Response {
        guard let id = context.decodedParameter("id").flatMap({ Int64($0) }),
            let event = try await operators.inspect(id, logger: context.logger)
        else {
            return render(
                "message", status: .notFound, session: session, title: "No such event", nav: "Queue",
                [
                    "heading": "No such event", "message": "There is no event \(context.decodedParameter("id") ?? "").",
                ])
        }
        var values: [String: Any] = [
            "id": event.id, "state": event.state ?? "unknown (queue row deleted)", "receivedAt": ConsoleFormat.time(event.receivedAt),
            "source": event.source ?? "—",
            "route": event.route ?? "—", "environmentHint": event.environmentHint ?? "—", "requestID": event.requestID ?? "—",
            "userID": event.userID ?? "—", "finishedAt": ConsoleFormat.time(event.finishedAt), "attempts": event.attempts,
            "body": event.body.map { String(buffer: $0) } ?? "(not in the log: the month it was received in was detached for archiving)",
            "bodyBytes": event.body?.readableBytes ?? 0,
            "actions": event.actions.map { action -> [String: Any] in
                [
                    "at": ConsoleFormat.time(action.performedAt), "who": action.requestedBy, "action": action.action, "reason": action.reason,
                    "previousState": action.previousState,
                ]
            },
            "failures": event.failures.map { failure -> [String: Any] in
                [
                    "attempt": failure.attempt, "at": ConsoleFormat.time(failure.failedAt), "worker": failure.worker ?? "—",
                    "outcome": failure.outcome, "error": failure.error,
                ]
            },
        ]
        if let lastError = event.lastError { values["lastError"] = lastError }
        let (outcome, reason, style) = Self.verification(event)
        values["verificationOutcome"] = outcome
        values["verificationReason"] = reason
        values["verificationClass"] = style
        if let uuid = event.notificationUUID, let decoded = try await operators.decodedNotification(uuid, logger: context.logger) {
            var notification: [String: Any] = ["uuid": decoded.notificationUUID, "payload": decoded.payload]
            if let transaction = decoded.transaction { notification["transaction"] = transaction }
            if let renewal = decoded.renewalInfo { notification["renewal"] = renewal }
            values["decoded"] = notification
        } else if let body = event.body, let (name, payload) = Self.signedPayload(body) {
            // A done event of an app's or a sync's signed data (a transaction or renewal info) verified: its payload is
            // what was recorded. Any other is shown decoded without verification, a notification done without a
            // recorded delivery included: the envelope handler (`work --handler envelope`) verifies nothing.
            if event.state == "done", [EventSource.client.rawValue, EventSource.serverAPI.rawValue].contains(event.source) {
                values["verifiedPayload"] = ["name": name, "payload": payload]
            } else {
                values["unverified"] = payload
            }
        }
        if let flash = ConsoleForm(queryOf: request)["flash"] {
            // A success is said only when the audit trail holds it: this user's action on this event, just now (the query
            // string alone is anyone's to write in a link).
            func didJust(_ action: String) -> Bool {
                event.actions.contains {
                    $0.action == action && $0.requestedBy == session.operatorName && $0.performedAt.timeIntervalSinceNow > -600
                }
            }
            switch flash {
            case "requeued" where didJust("requeue"):
                values["flash"] = "Event \(event.id) requeued: it is pending again with a fresh attempt budget."
            case "replayed" where didJust("replay"): values["flash"] = "Event \(event.id) replayed: the workers will process it again."
            case "unchanged":
                values["flash"] = "Nothing changed: event \(event.id) is not finished (it is \(event.state)), so it was not requeued or replayed."
            default: break
            }
        }
        if let formError { values["formError"] = formError }
        return render("event", status: status, session: session, title: "Event \(event.id)", nav: "Queue", values)
    }

    /// An endpoint's URL as the console shows it: its scheme, host and port, without the credentials a consumer may put
    /// in the rest (`user:password@`, a token in the path — Slack's and Discord's hooks carry one deep in it, Make's and
    /// webhook.site's as its only segment — the query, the fragment), which every console user, viewers included, would
    /// otherwise read; `/…` marks what was left out. `storeledger webhooks list` shows it whole to whoever holds the
    /// database's credentials.
    static func shownURL(_ url: String) -> String {
        guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.percentEncodedHost
        else { return "(an unreadable URL)" }
        let shown = "\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? "")
        let hidden =
            components.user != nil || components.password != nil || !components.percentEncodedPath.allSatisfy { $0 == "/" }
            || components.query != nil || components.fragment != nil
        return shown + (hidden ? "/…" : "")
    }

    /// The verification outcome shown for an event: outcome, reason and badge style.
    static func verification(_ event: EventInspection) -> (String, String, String) {
        switch event.state {
        case "done":
            if let uuid = event.notificationUUID { return ("verified", "notification \(uuid) recorded", "good") }
            // A notification done without one recorded was not verified: a worker ran the envelope handler
            // (`work --handler envelope`), which only reads the envelope.
            if event.source == EventSource.appleNotification.rawValue || event.source == EventSource.reconciliation.rawValue {
                return ("done, not verified", "no notification was verified or recorded from it (processed by the envelope handler)", "warn")
            }
            return ("processed", "verified and recorded (not a notification)", "good")
        case "rejected": return ("rejected", event.rejectReason ?? "", "bad")
        case "dead": return ("failed", event.lastError ?? "", "bad")
        default: return ("not verified yet", event.lastError.map { "last error: \($0)" } ?? "waiting for a worker", "warn")
        }
    }

    /// The member naming the JWS of the body (`signedPayload`, `signedTransactionInfo`, `signedTransaction`,
    /// `signedRenewalInfo`) and the JSON inside it, decoded here WITHOUT verification, pretty-printed; nil when the
    /// body holds no readable JWS.
    static func signedPayload(_ body: ByteBuffer) -> (name: String, payload: String)? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
            let (name, jws) = ["signedPayload", "signedTransaction", "signedTransactionInfo", "signedRenewalInfo"].lazy
                .compactMap({ name in (object[name] as? String).map { (name, $0) } }).first
        else { return nil }
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let payload = try? JSONSerialization.jsonObject(with: data),
            let pretty = try? JSONSerialization.data(withJSONObject: payload, options: [.prettyPrinted, .sortedKeys])
        else { return nil }
        return (name, String(decoding: pretty, as: UTF8.self))
    }

    /// `POST /console/events/{id}/requeue` and `…/replay`: an operator's action with a reason, through the same
    /// ``OperatorStore`` call as the CLI, recorded as `console:NAME`; then 303 back to the event page with a flash.
    func operatorAction(_ action: OperatorAction, _ request: Request, context: some RequestContext) async throws -> Response {
        guard let session = try await signedIn(request) else { return Self.redirect("/console/login") }
        guard let form = try await checkedForm(request, expected: session.csrf, session: session) else {
            return forbidden(session, "The form's security token is missing or wrong: reload the page and try again.")
        }
        guard session.role == .operator else {
            context.logger.notice("console action refused", metadata: ["principal": "\(session.principal)", "action": "\(action.rawValue)"])
            return forbidden(session, "Only an operator may \(action.rawValue) events; you are signed in as a viewer.")
        }
        guard let id = context.decodedParameter("id").flatMap({ Int64($0) }) else { return Self.redirect("/console/queue") }
        let reason = form["reason"]?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        guard !reason.isEmpty, reason.count <= OperatorStore.maximumReasonLength else {
            return try await eventPage(
                request, session: session, context: context, status: .badRequest,
                formError: reason.isEmpty
                    ? "Say why: the reason is recorded with the action."
                    : "The reason is longer than \(OperatorStore.maximumReasonLength) characters."
            )
        }
        guard try await operators.inspect(id, logger: context.logger) != nil else {
            return try await eventPage(request, session: session, context: context)
        }
        let count: Int
        switch action {
        case .requeue:
            count = try await operators.requeue(.ids([id]), by: session.operatorName, reason: reason, logger: context.logger)
        case .replay:
            count = try await operators.requeue(.idRange(id...id), action: "replay", by: session.operatorName, reason: reason, logger: context.logger)
        }
        let flash = count == 0 ? "unchanged" : action == .requeue ? "requeued" : "replayed"
        return Self.redirect("/console/events/\(id)?flash=\(flash)")
    }

    /// `GET /console/webhooks`: endpoints with their backlog, and the deliveries of the latest events.
    func webhooksPage(_ session: ConsoleSignedIn, context: some RequestContext) async throws -> Response {
        let endpoints = try await webhooks.list(logger: context.logger)
        let limit = 50
        let deliveries = try await webhooks.recentDeliveries(limit: limit, logger: context.logger)
        return render(
            "webhooks", session: session, title: "Webhooks", nav: "Webhooks",
            [
                "limit": limit,
                "endpoints": endpoints.map { endpoint -> [String: Any] in
                    [
                        "id": endpoint.id, "url": Self.shownURL(endpoint.url), "active": endpoint.active ? "yes" : "no", "pending": endpoint.pending,
                        "failed": endpoint.failed,
                    ]
                },
                "deliveries": deliveries.map { delivery -> [String: Any] in
                    [
                        "createdAt": ConsoleFormat.time(delivery.createdAt), "eventID": delivery.eventID.uuidString.lowercased(),
                        "type": delivery.type,
                        "originalTransactionID": delivery.originalTransactionID, "url": Self.shownURL(delivery.url), "state": delivery.state,
                        "stateClass": delivery.state == "delivered" ? "good" : delivery.state == "failed" ? "bad" : "warn",
                        "attempts": delivery.attempts,
                        "lastAnswer": delivery.lastStatus.map { "HTTP \($0)" } ?? delivery.lastError ?? "—",
                        "when": delivery.deliveredAt.map { "delivered \(ConsoleFormat.time($0))" }
                            ?? (delivery.state == "pending" ? "next \(ConsoleFormat.time(delivery.nextAttemptAt))" : "—"),
                    ]
                },
            ])
    }
}
