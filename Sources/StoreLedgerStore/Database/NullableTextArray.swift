import NIOCore
import PostgresNIO

/// A `text[]` bind whose elements may be NULL, which PostgresNIO's `[String]` cannot express: the multi-row
/// statements (``AppendStatement``) bind one array per column, and a missing header must stay NULL, not become `''`.
///
/// Encoded in Postgres's binary array format: dimensions, a has-nulls flag, the element type, then each element
/// as a length (−1 for NULL) and its bytes.
struct NullableTextArray: PostgresNonThrowingEncodable, Sendable {
    /// `text[]`.
    static var psqlType: PostgresDataType { .textArray }
    /// Binary.
    static var psqlFormat: PostgresFormat { .binary }

    /// The elements, in order.
    let elements: [String?]

    /// Wraps `elements`.
    init(_ elements: [String?]) {
        self.elements = elements
    }

    /// Writes the binary array.
    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        buffer.writeInteger(Int32(elements.isEmpty ? 0 : 1))  // dimensions
        buffer.writeInteger(Int32(elements.contains { $0 == nil } ? 1 : 0))  // has nulls
        buffer.writeInteger(PostgresDataType.text.rawValue)  // element type
        guard !elements.isEmpty else { return }
        buffer.writeInteger(Int32(elements.count))  // dimension size
        buffer.writeInteger(Int32(1))  // lower bound
        for element in elements {
            guard let element else {
                buffer.writeInteger(Int32(-1))
                continue
            }
            let lengthIndex = buffer.writerIndex
            buffer.writeInteger(Int32(0))
            let written = buffer.writeString(element)
            buffer.setInteger(Int32(written), at: lengthIndex)
        }
    }
}
