package import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// POSTs planned deliveries to a ``DeliveryTarget`` as Apple does (`Content-Type: application/json`,
/// `{"signedPayload": "…"}`), one at a time, optionally paced to a rate.
package struct NotificationSender: Sendable {
    /// Where to send.
    package let target: DeliveryTarget
    /// The HTTP client (owned by the caller).
    package let httpClient: HTTPClient
    /// How long one POST may take.
    package var timeout: Duration

    /// Creates a sender.
    package init(target: DeliveryTarget, httpClient: HTTPClient = .shared, timeout: Duration = .seconds(5)) {
        self.target = target
        self.httpClient = httpClient
        self.timeout = timeout
    }

    /// POSTs one notification.
    package func post(_ notification: SimulatedNotification) async -> DeliveryOutcome {
        var request = HTTPClientRequest(url: target.url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "storeledger-simulate")
        request.body = .bytes(ByteBuffer(bytes: notification.body))
        do {
            let response = try await httpClient.execute(request, timeout: .nanoseconds(Int64(timeout / .nanoseconds(1))))
            let body = try await response.body.collect(upTo: 4096)
            let status = Int(response.status.code)
            let message = (200..<300).contains(status) ? nil : String(buffer: body).prefix(300).description
            return DeliveryOutcome(status: status, message: message)
        } catch {
            return DeliveryOutcome(status: nil, message: String(describing: error))
        }
    }

    /// Sends every delivery in order, at most `rate` per second (unpaced when `nil`); `report` is called after
    /// each POST with its 1-based index.
    ///
    /// Stops early when the task is cancelled, and (with `stopWithoutResponse`) at the first POST that got no
    /// HTTP response at all: nothing is listening, and every further POST would wait out ``timeout`` too. What was
    /// not sent is counted in ``DeliverySummary/unsent``.
    package func deliver(
        _ deliveries: [PlannedDelivery],
        rate: Double? = nil,
        stopWithoutResponse: Bool = true,
        report: (Int, PlannedDelivery, DeliveryOutcome) -> Void = { _, _, _ in }
    ) async -> DeliverySummary {
        var summary = DeliverySummary()
        let clock = ContinuousClock()
        let start = clock.now
        var seen = Set<String>()
        for (index, delivery) in deliveries.enumerated() {
            if let rate, rate > 0 {
                let due = start.advanced(by: .seconds(Double(index) / rate))
                if due > clock.now { try? await Task.sleep(until: due, clock: clock) }
            }
            if Task.isCancelled { break }
            let outcome = await post(delivery.notification)
            summary.sent += 1
            if outcome.isSuccess { summary.succeeded += 1 } else { summary.failed += 1 }
            if delivery.isDuplicate { summary.duplicates += 1 }
            if seen.insert(delivery.notification.signedPayload).inserted { summary.notifications += 1 }
            report(index + 1, delivery, outcome)
            if stopWithoutResponse, outcome.status == nil { break }
        }
        summary.unsent = deliveries.count - summary.sent
        let elapsed = clock.now - start
        summary.elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return summary
    }
}
