/// A user id as a caller writes it in JSON: a string, taken as it is, or a whole number, taken as its decimal digits
/// (a host app whose user ids are integers signs `{"sub": 42}` or posts `{"user_id": 42}`: user "42"). One rule for
/// the user id claim of a JWT and a request body's `user_id`, so the same user is named the same way by either.
struct UserIDValue: Decodable, Sendable {
    /// The id as a string.
    let value: String

    /// Decodes a string or a whole number that fits in 64 bits; anything else (a fraction, a boolean) is refused.
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            value = text
        } else {
            value = String(try container.decode(Int64.self))
        }
    }
}
