import ServerShell

/// `addressRateLimit`: a token bucket per client address, taken before anything else is looked
/// at (credentials, body), so one address cannot flood the token endpoint with guesses or with
/// tokens for ever new end users, nor guess at the admin token quickly.
///
/// The address is the request's `remoteAddress`: the socket's peer, or the client a trusted proxy
/// names (`TrustedProxies`). Behind a proxy that is not trusted, every client shares the proxy's
/// address and so one bucket — which is why `trustedProxies` exists. IPv6 clients are counted by
/// their /64 (`IPAddress.rateLimitKey`).
struct AddressLimiter: Sendable {
    private let limiter: RateLimiter

    /// A limiter with `rate` per address.
    init(_ rate: BizServerConfiguration.RateLimit) { limiter = RateLimiter(rate) }

    /// Takes one token for `address` at `now`, or throws 429 with the whole seconds to wait.
    func take(_ address: String, now: Double) throws(BizError) {
        let key = IPAddress(address)?.rateLimitKey ?? address
        if let retryAfter = limiter.take(key: key, now: now) {
            throw BizError.addressRateLimited(retryAfter: retryAfter).with(detail: "address \(key)")
        }
    }
}
