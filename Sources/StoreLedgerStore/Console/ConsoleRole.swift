/// What a console user may do: a viewer reads every page; an operator also requeues and replays events.
package enum ConsoleRole: String, Sendable, CaseIterable, Codable {
    /// Reads customers, the queue, events, webhooks and charts.
    case viewer
    /// A viewer who may also requeue and replay events (recorded in `operator_actions`).
    case `operator`
}
