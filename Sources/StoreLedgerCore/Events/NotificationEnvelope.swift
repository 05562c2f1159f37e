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
        if let signedPayload = exactEnvelope(body) { return NotificationEnvelope(signedPayload: signedPayload) }
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
            // Quoted and escaped as Swift writes a string literal: the reason is logged, and a key may hold a newline.
            throw ParseError(
                description: "the body has the key \(String(reflecting: String(name))) more than once; each key may appear only once")
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

    /// The signed payload of a body exactly as Apple sends one, `{"signedPayload":"<compact JWS>"}` (JSON whitespace
    /// allowed around the tokens), read without a JSON parser; nil for any other body, which ``parse(_:)`` then
    /// parses in full. The value must be non-empty printable ASCII without a quote or a backslash (a compact JWS is
    /// base64url and dots), so it holds no escape and reads the same in every JSON parser: the full parse would
    /// return the same envelope. The worker parses every event's body, and the general parse was a twentieth of its
    /// time; the value is scanned thirty-two bytes a step (``PlainJSONReader/endOfPlainStringBytes(_:from:)``, the scan
    /// the payload reader uses; eight bytes a step, it took 0.9 % of the worker's samples against 1.2 % for the byte
    /// table of the JWS alphabet it replaced).
    static func exactEnvelope(_ body: some DataProtocol) -> String? {
        if let contiguous = body.withContiguousStorageIfAvailable({ exactEnvelope(bytes: $0) }) { return contiguous }
        return Array(body).withUnsafeBufferPointer { exactEnvelope(bytes: $0) }
    }

    /// ``exactEnvelope(_:)`` on contiguous bytes (a claimed event's body is one: no copy).
    private static func exactEnvelope(bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var index = 0
        func skipWhitespace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D { index += 1 }
        }
        func expect(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { return false }
            index += count
            return true
        }
        skipWhitespace()
        guard expect("{") else { return nil }
        skipWhitespace()
        guard expect("\"signedPayload\"") else { return nil }
        skipWhitespace()
        guard expect(":") else { return nil }
        skipWhitespace()
        guard expect("\"") else { return nil }
        let start = index
        index = PlainJSONReader.endOfPlainStringBytes(bytes, from: index)
        let end = index
        guard end > start, expect("\"") else { return nil }
        skipWhitespace()
        guard expect("}") else { return nil }
        skipWhitespace()
        guard index == bytes.count else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }
}
