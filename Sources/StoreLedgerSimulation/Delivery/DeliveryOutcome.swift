/// What happened to one POST.
public struct DeliveryOutcome: Hashable, Sendable {
    /// The HTTP status, if a response arrived.
    public let status: Int?
    /// The transport error or the start of an error response's body.
    public let message: String?

    /// Creates an outcome.
    public init(status: Int?, message: String?) {
        self.status = status
        self.message = message
    }

    /// A 2xx response.
    public var isSuccess: Bool { status.map { (200..<300).contains($0) } ?? false }
}
