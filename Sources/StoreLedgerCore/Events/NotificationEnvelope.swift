public import Foundation

/// The body Apple POSTs: `{"signedPayload": "<compact JWS>"}`.
public struct NotificationEnvelope: Sendable, Hashable, Codable {
    /// The notification as a compact JWS.
    public var signedPayload: String

    /// Wraps a compact JWS.
    public init(signedPayload: String) { self.signedPayload = signedPayload }

    /// Why a body is not a notification envelope.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// A sentence saying what is wrong with the body.
        public let description: String
    }

    /// Parses a request body, which must be a JSON object with a non-empty string `signedPayload` and no name
    /// twice at its top level.
    ///
    /// A repeated name is refused, whichever it is: JSON parsers disagree on which copy wins (Foundation keeps the
    /// last, others the first), so a body that says `signedPayload` twice could be stored as one notification and
    /// read as another. Apple's envelope has one member; values nested inside other members are not examined
    /// (nothing reads them). The receiver and the worker both parse with this, so they always agree.
    public static func parse(_ body: some DataProtocol) throws(ParseError) -> NotificationEnvelope {
        let data = Data(body)
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: [])
        } catch {
            throw ParseError(description: "the body is not valid JSON")
        }
        guard let dictionary = object as? [String: Any] else {
            throw ParseError(description: "the body must be a JSON object")
        }
        let repeated: String?
        do {
            repeated = try JSONTopLevelKeys.firstDuplicate(in: data)
        } catch {
            throw ParseError(description: "the body's keys could not be read (send UTF-8 JSON)")
        }
        if let repeated {
            let name = repeated.count > 64 ? repeated.prefix(64) + "…" : repeated
            throw ParseError(description: "the body has the key \"\(name)\" more than once; each key may appear only once")
        }
        guard let value = dictionary["signedPayload"] else {
            throw ParseError(description: "the body has no signedPayload field")
        }
        guard let signedPayload = value as? String else {
            throw ParseError(description: "signedPayload must be a string")
        }
        guard !signedPayload.isEmpty else {
            throw ParseError(description: "signedPayload is empty")
        }
        return NotificationEnvelope(signedPayload: signedPayload)
    }
}
