package import StoreLedgerCore

extension Timestamp {
    /// The instant rounded down to a whole millisecond: the App Store signs integer epoch milliseconds in Production
    /// and Sandbox (only Xcode's StoreKit testing writes fractions), so every date the simulator signs is whole.
    package var wholeMilliseconds: Timestamp {
        let whole = millisecondsSince1970.rounded(.down)
        return whole == millisecondsSince1970 ? self : Timestamp(millisecondsSince1970: whole)
    }

    /// Whether the instant is a whole number of milliseconds, as Apple signs it outside Xcode.
    package var isWholeMilliseconds: Bool {
        millisecondsSince1970.rounded(.down) == millisecondsSince1970
    }
}
