extension KeyedDecodingContainer {
    /// The string at `key`, or `nil` when it is absent, `null` or not a string.
    func lenientString(_ key: Key) -> String? {
        (try? decodeIfPresent(String.self, forKey: key)) ?? nil
    }

    /// The number at `key` as a `Double` (integers and fractions alike), or `nil` when absent or not a number.
    func lenientDouble(_ key: Key) -> Double? {
        (try? decodeIfPresent(Double.self, forKey: key)) ?? nil
    }

    /// The integer at `key`, accepting an integral JSON number (also written `1234.0`) or a numeric string.
    func lenientInt64(_ key: Key) -> Int64? {
        if let value = (try? decodeIfPresent(Int64.self, forKey: key)) ?? nil {
            return value
        }
        if let value = (try? decodeIfPresent(Double.self, forKey: key)) ?? nil,
            value.rounded() == value, let exact = Int64(exactly: value)
        {
            return exact
        }
        if let text = (try? decodeIfPresent(String.self, forKey: key)) ?? nil {
            return Int64(text)
        }
        return nil
    }

    /// The nested object at `key`, or `nil` when it is absent or not an object.
    func lenientObject<T: Decodable>(_ type: T.Type, _ key: Key) -> T? {
        (try? decodeIfPresent(T.self, forKey: key)) ?? nil
    }
}
