/// One page of the purchases a console lookup found, and how many it found in all.
package struct CustomerPurchasePage: Sendable, Equatable {
    /// The page's purchases, in the lookup's order.
    package var purchases: [CustomerPurchase]
    /// How many purchases the key names in all (every page's).
    package var total: Int

    /// Creates a page.
    package init(purchases: [CustomerPurchase], total: Int) {
        self.purchases = purchases
        self.total = total
    }
}
