package import Foundation
package import NIOCore
package import PostgresNIO

/// Text that is already UTF-8 bytes (a verified payload's JSON), sent as a `text` parameter as it is, without
/// becoming a Swift `String` first: no validation pass and no copy on this side. PostgreSQL checks the encoding of
/// every `text` value it receives, so bytes that are not UTF-8 fail the statement instead of being stored.
package struct UTF8Text: PostgresNonThrowingEncodable, PostgresArrayEncodable, Sendable, Hashable {
    /// The text's UTF-8 bytes.
    package let bytes: Data

    /// The text whose UTF-8 bytes are `bytes`.
    package init(_ bytes: Data) { self.bytes = bytes }

    /// `text`.
    package static var psqlType: PostgresDataType { .text }
    /// A `text` value's binary form is its bytes.
    package static var psqlFormat: PostgresFormat { .binary }
    /// `text[]`.
    package static var psqlArrayType: PostgresDataType { .textArray }

    /// Writes the bytes.
    package func encode<JSONEncoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        byteBuffer.writeBytes(bytes)
    }
}
