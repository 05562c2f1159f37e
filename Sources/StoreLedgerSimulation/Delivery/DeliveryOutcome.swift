/// What happened to one POST.
package struct DeliveryOutcome: Hashable, Sendable {
    /// The HTTP status, if a response arrived.
    package let status: Int?
    /// The transport error or the start of an error response's body.
    package let message: String?

    /// Creates an outcome.
    package init(status: Int?, message: String?) {
        self.status = status
        self.message = message
    }

    /// A 2xx response.
    package var isSuccess: Bool { status.map { (200..<300).contains($0) } ?? false }
}
