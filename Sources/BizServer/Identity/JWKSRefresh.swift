/// When a `jwksURL` key set is fetched again: the pure decision, time passed in (DESIGN.md habit 4).
///
/// - A token whose `kid` is not in the set (or any token before the first successful fetch)
///   needs a fetch, awaited by that request, but at most one attempt per `minimumInterval`
///   (60 s), so a stream of made-up `kid`s cannot turn biz-server into a load generator
///   against the identity provider; within the interval the `kid` is simply unknown.
/// - A set older than `maximumAge` (1 h) is refreshed in the background on the next request,
///   so a key the provider withdrew stops working within about an hour.
/// - A failed fetch keeps the keys there are; only the attempt time moves.
/// - One fetch at a time: a request that needs one while another is in flight waits for it.
struct JWKSRefresh: Sendable, Equatable {
    static let minimumInterval: Double = 60
    static let maximumAge: Double = 3600

    /// When the last fetch started, succeeded (Unix seconds), and whether one is running now.
    private(set) var lastAttempt: Double?
    private(set) var lastSuccess: Double?
    private(set) var inFlight = false

    /// What the request in hand should do.
    enum Decision: Equatable {
        /// Go on with the keys there are.
        case useKeys
        /// Start a fetch and wait for it, then look again.
        case fetchAndWait
        /// Start a fetch, but go on with the keys there are.
        case fetchInBackground
        /// Wait for the fetch in flight, then look again.
        case waitForFetch
    }

    /// Whether there has ever been a successful fetch.
    var hasKeys: Bool { lastSuccess != nil }

    /// Decides for a request at `now` that found its key in the set (`needsFetch` false) or
    /// could not (an unknown `kid`, or no set fetched yet).
    mutating func decide(needsFetch: Bool, now: Double) -> Decision {
        if inFlight { return needsFetch ? .waitForFetch : .useKeys }
        if needsFetch {
            guard mayAttempt(now) else { return .useKeys }
            start(now)
            return .fetchAndWait
        }
        if let lastSuccess, now - lastSuccess >= Self.maximumAge, mayAttempt(now) {
            start(now)
            return .fetchInBackground
        }
        return .useKeys
    }

    /// The fetch started by `decide` ended at `now`.
    mutating func finished(succeeded: Bool, now: Double) {
        inFlight = false
        if succeeded { lastSuccess = now }
    }

    private func mayAttempt(_ now: Double) -> Bool {
        // A clock stepped backwards must not lock fetching out for the size of the step.
        guard let lastAttempt else { return true }
        return now - lastAttempt >= Self.minimumInterval || now < lastAttempt
    }

    private mutating func start(_ now: Double) {
        inFlight = true
        lastAttempt = now
    }
}
