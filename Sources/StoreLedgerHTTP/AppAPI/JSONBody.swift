package import Foundation
package import Hummingbird
import NIOCore

/// Reading request bodies and writing answers as JSON, with errors in the `{error, code}` shape.
package enum JSONBody {
    /// The largest app-facing request body accepted unless a route says otherwise (1 MiB; a restore takes more:
    /// ``AppStorePaymentsController/maximumRestoreBytes``).
    package static let maximumSize = 1 << 20

    /// Decodes the request body as `T`; a body larger than `maximumBytes` (default ``maximumSize``), not JSON or
    /// missing a field is a 413/400 that says which.
    package static func decode<T: Decodable>(
        _ type: T.Type, from request: Request, context: StoreLedgerRequestContext, upTo maximumBytes: Int = maximumSize
    ) async throws -> T {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maximumBytes)
        } catch {
            throw APIError(.contentTooLarge, code: "payload_too_large", message: "the body is larger than \(maximumBytes) bytes")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch DecodingError.keyNotFound(let key, _) {
            throw APIError(.badRequest, code: "invalid_request", message: "the body has no \"\(key.stringValue)\"")
        } catch DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context) {
            let field = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw APIError(.badRequest, code: "invalid_request", message: "\"\(field)\" has the wrong type: \(context.debugDescription)")
        } catch {
            throw APIError(.badRequest, code: "invalid_request", message: "the body is not a JSON object of the expected shape")
        }
    }

    /// How an answer writes its dates (always UTC).
    package enum DateStyle: Sendable {
        /// RFC 3339 without fractions, `2026-02-21T00:00:00Z`: StoreLedger's own routes and those whose clients read
        /// dates with `JSONDecoder`'s `.iso8601` (which refuses fractions).
        case wholeSeconds
        /// What JavaScript's `Date.prototype.toISOString()` writes, always three fraction digits,
        /// `2026-02-21T00:00:00.000Z`: seed 001's Node backend answered with its Mongoose dates so, and an app that
        /// read those (with fractional seconds expected) must read these.
        case javaScript
    }

    /// Encodes `value` as the answer (``encoder(dates:)``).
    package static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok, dates: DateStyle = .wholeSeconds) throws -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder(dates: dates).encode(value)))
        )
    }

    /// The answers' encoder: dates as `dates` says, keys as declared and sorted, slashes unescaped.
    package static func encoder(dates: DateStyle) -> JSONEncoder {
        let encoder = JSONEncoder()
        switch dates {
        case .wholeSeconds:
            encoder.dateEncodingStrategy = .iso8601
        case .javaScript:
            encoder.dateEncodingStrategy = .custom { date, encoder in
                var container = encoder.singleValueContainer()
                try container.encode(javaScriptISOString(date))
            }
        }
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// `date` as JavaScript's `toISOString()` writes it: UTC, three fraction digits always, the milliseconds
    /// truncated toward zero as `new Date(ms)` does (so an end of access is never written later than it is). A `Date` made from
    /// Apple's whole milliseconds is read as that millisecond, whatever the binary fraction's last bits say.
    package static func javaScriptISOString(_ date: Date) -> String {
        let exact = date.timeIntervalSince1970 * 1000
        let nearest = exact.rounded()
        let milliseconds = Int64(abs(exact - nearest) < 0.001 ? nearest : exact.rounded(.towardZero))
        let (seconds, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        // A date before 1970 has a negative remainder: borrow a second.
        let (wholeSeconds, millisecond) = fraction < 0 ? (seconds - 1, fraction + 1000) : (seconds, fraction)
        // `2026-02-21T00:00:00Z`, its `Z` then replaced by the fraction and a `Z`.
        let whole = Date.ISO8601FormatStyle().format(Date(timeIntervalSince1970: TimeInterval(wholeSeconds)))
        let digits = String(millisecond)
        return String(whole.dropLast()) + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }
}
