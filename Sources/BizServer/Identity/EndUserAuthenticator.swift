import Basics
import HTTPTransport

/// `POST /v1/uptoken` with `Authorization: Bearer <JWT>`: verifies the app's token for one of
/// its users and applies that user's limits. The result is who the upload token is for.
final class EndUserAuthenticator: Sendable {
    /// The `jwt.client` entry: bucket, limits, vars and callback settings of every user token.
    let client: BizServerConfiguration.Client
    private let settings: JWTConfiguration
    private let verifier: JWTVerifier
    private let source: JWKSSource
    private let secret: VerificationKey?
    private let limiter: any RateLimitState
    private let quota: DailyByteQuota?
    private let store: any UploadRecordStore
    private let metrics: BizMetrics

    /// Whom a verified token speaks for, and what it may still upload today.
    struct EndUser: Sendable, Equatable {
        /// The JWT's `sub`: the policy's `endUser`.
        let subject: String
        /// `jwt.keyPrefix` with the sub filled in.
        let keyPrefix: String
        /// Bytes left under `maxBytesPerUserPerDay`, when that is set.
        let remainingBytes: Int64?
    }

    /// Nil when `settings.client` names no client (the configuration was not validated).
    init?(
        _ settings: JWTConfiguration, clients: [BizServerConfiguration.Client], serverRate: BizServerConfiguration.RateLimit,
        store: any UploadRecordStore, clock: any WallClock, transport: (any HTTPTransport)? = nil, logger: Logger,
        metrics: BizMetrics, rateLimits: @escaping RateLimitFactory = RateLimiter.inProcess
    ) {
        guard let client = clients.first(where: { $0.id == settings.client }) else { return nil }
        self.client = client
        self.settings = settings
        verifier = JWTVerifier(policy: JWTClaimsPolicy(
            issuer: settings.issuer, audience: settings.audience, leewaySeconds: Double(settings.leewaySeconds)))
        switch settings.keys {
        case .none: source = JWKSSource(fixed: [], clock: clock, logger: logger, metrics: metrics)
        case .file(_, let jwks): source = JWKSSource(fixed: jwks.keys, clock: clock, logger: logger, metrics: metrics)
        case .url(let url): source = JWKSSource(url: url, transport: transport, clock: clock, logger: logger, metrics: metrics)
        }
        secret = settings.hs256Secret.map(VerificationKey.init(hs256Secret:))
        // tokensPerMinutePerUser: a bucket of that many, refilled over a minute; without it each
        // user gets the server-wide per-caller rate, so one user cannot spend the whole app's.
        limiter = rateLimits(Self.scope(client: client.id), settings.perUser.tokensPerMinute.map {
            .init(tokensPerSecond: Double($0) / 60, burst: Double($0))
        } ?? serverRate)
        quota = settings.perUser.maxBytesPerDay.map(DailyByteQuota.init(limit:))
        self.store = store
        self.metrics = metrics
    }

    /// The rate-limit scope of the end users of client `client`.
    static func scope(client: String) -> String { "user:\(client)" }

    /// Verifies `token` at `now` (Unix seconds) and takes one of the user's tokens per minute.
    func authenticate(_ token: String, now: Double) async throws(BizError) -> String {
        do {
            let jwt = try CompactJWT.parse(token)
            let key = try await source.key(for: jwt, secret: secret)
            let subject = try verifier.subject(of: jwt, key: key, now: now)
            if let retryAfter = try await limiter.take(key: subject, now: now) {
                throw BizError.userRateLimited(retryAfter: retryAfter)
            }
            return subject
        } catch let refusal as JWTRefusal {
            throw BizError.jwt(refusal)
        } catch let error as BizError {
            throw error
        } catch {
            throw BizError.jwt(JWTRefusal(.malformed, "\(error)"))
        }
    }

    /// The user `subject` as the token will name them, after the daily byte quota for a request
    /// declaring `declared` bytes at `now`.
    func endUser(_ subject: String, declared: Int64?, now: Double) async throws(BizError) -> EndUser {
        let prefix = EndUserSubject.keyPrefix(settings.keyPrefix, sub: subject)
        guard let quota else { return EndUser(subject: subject, keyPrefix: prefix, remainingBytes: nil) }
        let milliseconds = Int64((now * 1000).rounded(.down))
        let recorded: [UploadSize]
        do {
            recorded = try await store.uploadSizes(
                clientID: client.id, endUser: subject, since: milliseconds - DailyByteQuota.window)
        } catch {
            metrics.storeErrors.increment()
            throw BizError.storeUnavailable.with(detail: "\(error)")
        }
        switch quota.decide(recorded: recorded, declared: declared, now: milliseconds) {
        case .allowed(let remaining): return EndUser(subject: subject, keyPrefix: prefix, remainingBytes: remaining)
        case .exhausted(let retryAfter): throw BizError.userQuotaExhausted(retryAfter: retryAfter)
        case .tooLarge: throw BizError.fileTooLarge.with(detail: "fsize above maxBytesPerUserPerDay")
        }
    }
}
