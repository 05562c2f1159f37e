/// A subscription's billing period, as an ISO 8601 duration of whole weeks, months or years (`P1W`, `P1M`,
/// `P3M`, `P1Y`), the form App Store Connect and StoreKit's `Product.SubscriptionPeriod` use.
public struct SubscriptionPeriod: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The unit of a period.
    public enum Unit: String, Sendable, Hashable, Codable {
        /// Days (`D`).
        case day = "D"
        /// Weeks (`W`).
        case week = "W"
        /// Months (`M`).
        case month = "M"
        /// Years (`Y`).
        case year = "Y"
    }

    /// How many units.
    public let value: Int
    /// The unit.
    public let unit: Unit

    /// Creates a period of `value` units.
    public init(value: Int, unit: Unit) {
        self.value = value
        self.unit = unit
    }

    /// Parses `P<n><D|W|M|Y>`; nil for anything else.
    public init?(iso8601 text: String) {
        guard text.count >= 3, text.first == "P", let unit = text.last.flatMap({ Unit(rawValue: String($0)) }),
            let value = Int(text.dropFirst().dropLast()), value > 0
        else { return nil }
        self.init(value: value, unit: unit)
    }

    /// The ISO 8601 form, e.g. `P1M`.
    public var description: String { "P\(value)\(unit.rawValue)" }

    /// The period in months, as RevenueCat normalises prices for MRR (52/12 weeks and 30 days to a month).
    public var months: Double {
        switch unit {
        case .day: Double(value) / 30
        case .week: Double(value) * 12 / 52
        case .month: Double(value)
        case .year: Double(value) * 12
        }
    }

    /// A plain-word name for the common periods (`weekly`, `monthly`, `quarterly`, `semiannual`, `yearly`),
    /// else the ISO form.
    public var plainName: String {
        switch (value, unit) {
        case (1, .week): "weekly"
        case (1, .month): "monthly"
        case (2, .month): "bimonthly"
        case (3, .month): "quarterly"
        case (6, .month): "semiannual"
        case (1, .year), (12, .month): "yearly"
        default: description
        }
    }

    /// Decodes the ISO 8601 string form.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let period = SubscriptionPeriod(iso8601: text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "'\(text)' is not a period like P1W, P1M, P3M or P1Y")
            )
        }
        self = period
    }

    /// Encodes the ISO 8601 string form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
