import Foundation

/// Seed 002's iOS client, translated for tests: the request body exactly as its `PurchaseManager` encodes it, and the
/// documented answer as a strict `Codable` client would decode it (`JSONDecoder`, no custom strategies).
enum SeedIAPClient {
    /// `struct RequestBody: Encodable { let transactionId: String; let productId: String; let revoked: Bool }`
    /// from `postValidationToServer(transactionId:productId:revoked:)`.
    struct RequestBody: Encodable {
        let transactionId: String
        let productId: String
        let revoked: Bool
    }

    /// The documented 200 answer, `{isUnlocked, productId, transactionId, originalTransactionId, environment,
    /// revoked}`: booleans and strings. The two fields only Apple can know are optional (a transaction Apple does not
    /// know has neither); a `null` in a non-optional field, or a wrong type anywhere, fails the decode.
    struct ValidateResponse: Decodable {
        let isUnlocked: Bool
        let productId: String
        let transactionId: String
        let originalTransactionId: String?
        let environment: String?
        let revoked: Bool
    }

    /// The documented error answer, `{ "error": "..." }`.
    struct ErrorResponse: Decodable {
        let error: String
    }

    /// The body the client posts, encoded the way it encodes it (`JSONEncoder().encode(body)`).
    static func body(transactionId: String, productId: String, revoked: Bool = false) throws -> Data {
        try JSONEncoder().encode(RequestBody(transactionId: transactionId, productId: productId, revoked: revoked))
    }

    /// The body of the seed's other snippet (`callValidate`): `JSONSerialization` of `transactionId` and `productId`.
    static func dictionaryBody(transactionId: String, productId: String) throws -> Data {
        try JSONSerialization.data(withJSONObject: ["transactionId": transactionId, "productId": productId], options: [])
    }

    /// Decodes an answer strictly, after checking that no value anywhere in it is `null`.
    static func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        func hasNull(_ value: JSONValue) -> Bool {
            switch value {
            case .null: true
            case .array(let items): items.contains(where: hasNull)
            case .object(let members): members.values.contains(where: hasNull)
            default: false
            }
        }
        if hasNull(try JSONValue.parse(data)) {
            let text = String(decoding: data, as: UTF8.self)
            throw DecodingError.valueNotFound(T.self, .init(codingPath: [], debugDescription: "the answer holds a null: \(text)"))
        }
        return try JSONDecoder().decode(T.self, from: data)
    }
}
