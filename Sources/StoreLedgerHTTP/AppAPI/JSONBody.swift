import Foundation
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

    /// Encodes `value` as the answer (ISO 8601 dates without fractions, keys as declared, sorted).
    package static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value)))
        )
    }
}
