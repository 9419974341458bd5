import Basics
import HTTPKit
import JSONText
import UpCore

/// `POST /v1/uptoken`: authenticate the caller (an API client, or an end user by JWT),
/// rate-limit, validate, sign, answer.
struct TokenController: Sendable {
    let clients: ClientDirectory
    /// The per-client buckets: in-process (the synchronous route) or shared (asynchronous).
    let limiter: any RateLimitState
    let issuer: TokenIssuer
    let clock: any WallClock
    let metrics: BizMetrics
    /// biz-server's own callback URL; depends on the port actually bound, hence a closure.
    let callbackURL: @Sendable () -> String
    /// End users' JWTs, when the configuration has a `jwt` block.
    var endUsers: EndUserAuthenticator? = nil
    /// `addressRateLimit`, when configured.
    var addresses: AddressLimiter? = nil

    /// Largest accepted request body.
    static let maxBodyBytes = 16 << 10

    /// Synchronous without end users: an API-key token is in-memory computation (lookup, rate
    /// limit, sign), so it runs on the server's worker thread with no task or thread switch.
    /// With the shared (PostgreSQL) limiter it is deferred: the take goes to the limiter's batch
    /// from that thread, and its callback signs and answers, still with no task per request.
    /// With a `jwt` block the route is asynchronous, since a JWT may need the JWKS fetched and the
    /// daily byte quota read from the store; API keys then take the same synchronous path inside.
    func register(on router: inout Router) {
        if endUsers == nil, let local = limiter as? RateLimiter {
            router.postSync("/v1/uptoken", maxBodyBytes: Self.maxBodyBytes) { request, context in
                try issue(request, context, local: local)
            }
        } else if endUsers == nil {
            // The shared limiter answers a batch of takes from its own task: each request's
            // answer is given there, with no task per request (HTTPKit's deferred route).
            router.addDeferred(.post, "/v1/uptoken", maxBodyBytes: Self.maxBodyBytes) { request, context, responder in
                try issue(request, context, responder)
            }
        } else {
            router.post("/v1/uptoken", body: .collect(maxBytes: Self.maxBodyBytes)) { request, context in
                try await issueAny(request, context)
            }
        }
    }

    /// An API client's token, with the in-process limiter: no suspension.
    func issue(_ request: Request, _ context: RequestContext, local: RateLimiter) throws -> Response {
        try recordingRefusals(context) { () throws(BizError) in
            let now = clock.now()
            let caller = try self.caller(of: request, now: now)
            try local.take(clientID: caller.client.id, now: now)
            return try token(for: caller, request, now: now, context)
        }
    }

    /// An API client's token, with the shared limiter, answered when its batch returns.
    func issue(_ request: Request, _ context: RequestContext, _ responder: Responder) throws {
        let now = clock.now()
        let caller = try recordingRefusals(context) { () throws(BizError) -> ClientDirectory.Caller in
            try self.caller(of: request, now: now)
        }
        limiter.take(key: caller.client.id, now: now) { answer in
            responder.answer {
                try recordingRefusals(context) { () throws(BizError) in
                    if let retryAfter = try answer.get() { throw BizError.rateLimited(retryAfter: retryAfter) }
                    return try token(for: caller, request, now: now, context)
                }
            }
        }
    }

    /// An API client's token, with whichever limiter (the shared one is one database statement).
    func issue(_ request: Request, _ context: RequestContext) async throws -> Response {
        if let local = limiter as? RateLimiter { return try issue(request, context, local: local) }
        do throws(BizError) {
            let now = clock.now()
            let caller = try self.caller(of: request, now: now)
            if let retryAfter = try await limiter.take(key: caller.client.id, now: now) {
                throw BizError.rateLimited(retryAfter: retryAfter)
            }
            return try token(for: caller, request, now: now, context)
        } catch {
            throw refused(error, context)
        }
    }

    /// The API client asking, once the per-address limit (if configured) let the request in.
    private func caller(of request: Request, now: Double) throws(BizError) -> ClientDirectory.Caller {
        try addresses?.take(request.remoteAddress, now: now)
        return try clients.caller(authorization: request.headers["Authorization"])
    }

    /// `caller`'s token for the request's body, once its rate limit let it through.
    private func token(
        for caller: ClientDirectory.Caller, _ request: Request, now: Double, _ context: RequestContext
    ) throws(BizError) -> Response {
        let tokenRequest = try TokenRequest.parse(request.body)
        return try sign(for: caller.client, subject: caller.subject, apiKey: caller.keyID, tokenRequest, now: now, context)
    }

    /// An end user's token when the bearer is a JWT, else an API client's. An issued key
    /// (`upk_…`) is never taken for a JWT, whatever it contains.
    func issueAny(_ request: Request, _ context: RequestContext) async throws -> Response {
        guard let endUsers, let token = ClientDirectory.bearer(request.headers["Authorization"]),
              !IssuedAPIKey.hasPrefix(token), CompactJWT.looksLikeJWT(token)
        else { return try await issue(request, context) }
        do {
            let now = clock.now()
            try addresses?.take(request.remoteAddress, now: now)
            let subject = try await endUsers.authenticate(String(token), now: now)
            let tokenRequest = try TokenRequest.parse(request.body)
            let user = try await endUsers.endUser(subject, declared: tokenRequest.fsize, now: now)
            return try sign(for: endUsers.client, subject: TokenSubject(user), apiKey: nil, tokenRequest, now: now, context)
        } catch {
            throw refused(error, context)
        }
    }

    private func sign(
        for client: BizServerConfiguration.Client, subject: TokenSubject?, apiKey: String?, _ tokenRequest: TokenRequest, now: Double,
        _ context: RequestContext
    ) throws(BizError) -> Response {
        let traceID = tokenRequest.traceID ?? TraceID.generate()
        let issued = try issuer.issue(
            for: client, subject: subject, request: tokenRequest, now: Int64(now.rounded(.down)), traceID: traceID,
            callbackURL: callbackURL())
        metrics.tokensIssued.increment([client.id])
        // On the request's access-log line: one line per request. Never the JWT or the API key,
        // only the key's id (which shows when a rotated-out key has stopped being used).
        context.addLogFields(
            ["event": "token issued", "client": .string(client.id), "apiKey": .string(apiKey ?? ""),
             "endUser": .string(issued.policy.endUser ?? ""),
             "trace": .string(traceID), "scope": .string(issued.policy.scope), "deadline": .int(issued.expiresAt)])
        return Response.json(raw: Self.json(issued), headers: ["Cache-Control": "no-store"])
    }

    private func recordingRefusals<Value>(
        _ context: RequestContext, _ body: () throws(BizError) -> Value
    ) throws(BizError) -> Value {
        do {
            return try body()
        } catch {
            throw refused(error, context)
        }
    }

    /// Counts and logs a refusal (its reason and log-only detail, never a credential).
    private func refused(_ error: BizError, _ context: RequestContext) -> BizError {
        metrics.tokensRefused.increment([error.name])
        context.addLogFields(["event": "token refused", "reason": .string(error.name), "detail": .string(error.detail)])
        return error
    }

    /// The response body, built as UTF-8 bytes (this runs once per token: no `String` detours).
    static func json(_ issued: TokenIssuer.IssuedToken) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(issued.uptokenBytes.count + 256)
        out.append(contentsOf: #"{"uptoken":"#.utf8)
        // AccessKey ":" base64 ":" base64: only an AccessKey with `"`, `\` or a control
        // character (none that Qiniu issues) needs escaping, so the signed bytes go in as they are.
        let accessKey = issued.uptokenBytes.prefix { $0 != UInt8(ascii: ":") }
        if accessKey.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            JSONText.appendString(issued.uptoken, to: &out)
        } else {
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: issued.uptokenBytes)
            out.append(UInt8(ascii: "\""))
        }
        out.append(contentsOf: #","bucket":"#.utf8)
        JSONText.appendString(issued.bucket, to: &out)
        out.append(contentsOf: #","key":"#.utf8)
        if let key = issued.key { JSONText.appendString(key, to: &out) } else { out.append(contentsOf: "null".utf8) }
        out.append(contentsOf: #","expiresAt":"#.utf8)
        out.append(contentsOf: String(issued.expiresAt).utf8)
        out.append(contentsOf: #","upHosts":["#.utf8)
        for (index, host) in issued.upHosts.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONText.appendString(host, to: &out)
        }
        out.append(contentsOf: #"],"traceId":"#.utf8)
        JSONText.appendString(issued.traceID, to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }
}
