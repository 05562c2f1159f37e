public import Foundation

/// What each product means to the host app: the entitlements it grants (e.g. `premium`), its period and a display
/// name. Loaded from a JSON file (`PRODUCT_CATALOG`; format in `docs/app-api.md`).
///
/// This type only carries the file. What a product grants, and when, is decided in one place: the SQL function
/// `entitlements_at` (migration 0012), which reads the catalog once the app-facing API has published it to the
/// `product_catalog` table (`ProductCatalogStore`). With no catalog (``ProductCatalog/empty``), every product grants
/// `premium` except consumables.
public struct ProductCatalog: Sendable, Equatable {
    /// The entitlement the app-facing routes ask about (`is_premium`, `isUnlocked`).
    public static let premium = "premium"

    /// The catalog that knows no products: every product grants the default for its type.
    public static let empty = ProductCatalog(products: [])

    /// One product's entry.
    public struct Product: Sendable, Equatable, Codable {
        /// The App Store product id.
        public var productID: ProductID
        /// The entitlements it grants; nil (the key absent) means the default for its type: `["premium"]`, nothing for
        /// a consumable.
        public var entitlements: [String]?
        /// The billing period of an auto-renewable subscription (for display and MRR), or how long a one-time product
        /// (a non-renewing subscription, or a product granting entitlements) grants from its purchase date.
        public var period: SubscriptionPeriod?
        /// A human name for dashboards and logs.
        public var displayName: String?

        /// Creates an entry.
        public init(productID: ProductID, entitlements: [String]? = nil, period: SubscriptionPeriod? = nil, displayName: String? = nil) {
            self.productID = productID
            self.entitlements = entitlements
            self.period = period
            self.displayName = displayName
        }

        enum CodingKeys: String, CodingKey {
            case productID = "product_id"
            case entitlements
            case period
            case displayName = "display_name"
        }

        /// Decodes an entry; an absent `entitlements` stays nil (the default for the product's type).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            productID = try container.decode(ProductID.self, forKey: .productID)
            entitlements = try container.decodeIfPresent([String].self, forKey: .entitlements)
            period = try container.decodeIfPresent(SubscriptionPeriod.self, forKey: .period)
            displayName = try container.decodeIfPresent(String.self, forKey: .displayName)
        }
    }

    /// The entries by product id.
    public let products: [ProductID: Product]

    /// Creates a catalog; a later entry for the same product id replaces an earlier one.
    public init(products: [Product]) {
        var byID: [ProductID: Product] = [:]
        for product in products { byID[product.productID] = product }
        self.products = byID
    }

    /// Parses the catalog file: `{"products": [{"product_id": …, "entitlements": […], "period": "P1M", "display_name": …}]}`.
    /// Throws an error that names the problem (unknown period, missing product id, duplicate).
    public init(json: Data) throws {
        struct File: Decodable { var products: [Product] }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: json)
        } catch let error as DecodingError {
            throw ProductCatalogError(.malformed, Self.describe(error))
        }
        var seen: Set<ProductID> = []
        for product in file.products {
            guard !product.productID.rawValue.isEmpty else { throw ProductCatalogError(.invalidProduct, "a product has an empty product_id") }
            guard seen.insert(product.productID).inserted else {
                throw ProductCatalogError(.invalidProduct, "product \(product.productID) is listed twice")
            }
        }
        self.init(products: file.products)
    }

    /// The product's billing period, when the catalog knows it.
    public func period(of productID: ProductID?) -> SubscriptionPeriod? {
        productID.flatMap { products[$0]?.period }
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, let context):
            "missing \"\(key.stringValue)\" at \(path(context.codingPath))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            "\(context.debugDescription) at \(path(context.codingPath))"
        @unknown default:
            "\(error)"
        }
    }

    private static func path(_ codingPath: [any CodingKey]) -> String {
        codingPath.isEmpty ? "the top level" : codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
    }
}
