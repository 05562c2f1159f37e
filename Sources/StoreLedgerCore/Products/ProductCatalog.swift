public import Foundation

/// What each product means to the host app: the entitlements it grants (e.g. `premium`), its billing period
/// (for MRR) and a display name. Loaded from a JSON file (`PRODUCT_CATALOG`; format in `docs/products.md`).
///
/// With no catalog (``ProductCatalog/empty``) every product of the app grants every entitlement, so `is_premium`
/// means "holds any entitled purchase".
public struct ProductCatalog: Sendable, Equatable {
    /// The entitlement the app-facing routes ask about (`is_premium`, `isUnlocked`).
    public static let premium = "premium"

    /// The catalog that knows no products: every product grants everything.
    public static let empty = ProductCatalog(products: [])

    /// One product's entry.
    public struct Product: Sendable, Equatable, Codable {
        /// The App Store product id.
        public var productID: ProductID
        /// The entitlements it grants (default `["premium"]`).
        public var entitlements: [String]
        /// The billing period of an auto-renewable or non-renewing subscription.
        public var period: SubscriptionPeriod?
        /// A human name for dashboards and logs.
        public var displayName: String?

        /// Creates an entry.
        public init(productID: ProductID, entitlements: [String] = [ProductCatalog.premium], period: SubscriptionPeriod? = nil, displayName: String? = nil) {
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

        /// Decodes an entry; `entitlements` defaults to `["premium"]`.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            productID = try container.decode(ProductID.self, forKey: .productID)
            entitlements = try container.decodeIfPresent([String].self, forKey: .entitlements) ?? [ProductCatalog.premium]
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
            throw ProductCatalogError(detail: Self.describe(error))
        }
        var seen: Set<ProductID> = []
        for product in file.products {
            guard !product.productID.rawValue.isEmpty else { throw ProductCatalogError(detail: "a product has an empty product_id") }
            guard seen.insert(product.productID).inserted else {
                throw ProductCatalogError(detail: "product \(product.productID) is listed twice")
            }
        }
        self.init(products: file.products)
    }

    /// Whether `productID` grants `entitlement`. With an empty catalog every product grants everything; with a
    /// catalog, products it does not list grant nothing.
    public func grants(_ entitlement: String, productID: ProductID?) -> Bool {
        if products.isEmpty { return true }
        guard let productID, let product = products[productID] else { return false }
        return product.entitlements.contains(entitlement)
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

extension ProductCatalog {
    /// The entitlements `productID` grants (`["premium"]` for any product when the catalog is empty).
    public func entitlements(of productID: ProductID?) -> [String] {
        if products.isEmpty { return [Self.premium] }
        return productID.flatMap { products[$0]?.entitlements } ?? []
    }
}
