import Basics
import HTTPKit
import UpCore

/// `POST /v1/uptoken`: authenticate the API client, rate-limit, validate, sign, answer.
struct TokenController: Sendable {
    let clients: ClientDirectory
    let limiter: RateLimiter
    let issuer: TokenIssuer
    let clock: any WallClock
    let metrics: BizMetrics
    /// biz-server's own callback URL; depends on the port actually bound, hence a closure.
    let callbackURL: @Sendable () -> String

    /// Largest accepted request body.
    static let maxBodyBytes = 16 << 10

    /// Synchronous: everything here is in-memory computation (lookup, rate limit, sign), so it
    /// runs on the server's worker thread with no task or thread switch.
    func register(on router: inout Router) {
        router.postSync("/v1/uptoken", maxBodyBytes: Self.maxBodyBytes) { request, context in
            try issue(request, context)
        }
    }

    func issue(_ request: Request, _ context: RequestContext) throws -> Response {
        do {
            let client = try clients.authenticate(authorization: request.headers["Authorization"])
            let now = clock.now()
            try limiter.take(clientID: client.id, now: now)
            let tokenRequest = try TokenRequest.parse(request.body)
            let traceID = tokenRequest.traceID ?? TraceID.generate()
            let issued = try issuer.issue(
                for: client, request: tokenRequest, now: Int64(now.rounded(.down)), traceID: traceID,
                callbackURL: callbackURL())
            metrics.tokensIssued.increment([client.id])
            // On the request's access-log line: one line per request.
            context.addLogFields(
                ["event": "token issued", "client": .string(client.id), "trace": .string(traceID),
                 "scope": .string(issued.policy.scope), "deadline": .int(issued.expiresAt)])
            return Response.json(raw: Self.json(issued), headers: ["Cache-Control": "no-store"])
        } catch {
            metrics.tokensRefused.increment([error.name])
            context.addLogFields(
                ["event": "token refused", "reason": .string(error.name), "detail": .string(error.detail)])
            throw error
        }
    }

    /// The response body, built as UTF-8 bytes (this runs once per token: no `String` detours).
    static func json(_ issued: TokenIssuer.IssuedToken) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(issued.uptoken.utf8.count + 256)
        out.append(contentsOf: #"{"uptoken":"#.utf8)
        JSONText.appendString(issued.uptoken, to: &out)
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
