/// Seed 002's anonymous mode (`IAP_VALIDATE_ANONYMOUS`, on by default; served where the App Store Server API is configured): `POST /api/iap/validate` and `/validate/sand`
/// answer callers without credentials for the transaction alone — looked up at Apple, appended to the log, linked to
/// no user — rate-limited per client address so nobody can spend the App Store Server API quota through them.
/// Callers who do send credentials are served as usual (linked to their user, not limited).
package struct AnonymousValidation: Sendable {
    /// The default per-client limit, requests per minute (`IAP_VALIDATE_ANONYMOUS_PER_MINUTE`).
    package static let defaultPerClient = 30
    /// The default limit for all anonymous callers together, requests per minute
    /// (`IAP_VALIDATE_ANONYMOUS_TOTAL_PER_MINUTE`).
    package static let defaultTotal = 1_200

    /// The limits.
    package let limiter: ClientRateLimiter
    /// How a request's client address is found (`TRUSTED_PROXIES`).
    package let addresses: ClientAddressResolver

    /// Creates the mode with its limits and trusted proxies.
    package init(
        perClientPerMinute: Int = AnonymousValidation.defaultPerClient,
        totalPerMinute: Int = AnonymousValidation.defaultTotal,
        trustedProxies: [IPAddressRange] = []
    ) {
        self.limiter = ClientRateLimiter(perClient: perClientPerMinute, total: totalPerMinute)
        self.addresses = ClientAddressResolver(trustedProxies: trustedProxies)
    }
}
