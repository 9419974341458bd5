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

    func register(on router: inout Router) {
        router.post("/v1/uptoken", body: .collect(maxBytes: Self.maxBodyBytes)) { request, context in
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
            context.logger.info(
                "token issued",
                ["reqid": .string(context.requestID), "client": .string(client.id), "trace": .string(traceID),
                 "scope": .string(issued.policy.scope), "deadline": .int(issued.expiresAt)])
            return Response.json(raw: Array(Self.json(issued).utf8), headers: ["Cache-Control": "no-store"])
        } catch {
            metrics.tokensRefused.increment([error.name])
            context.logger.info(
                "token refused",
                ["reqid": .string(context.requestID), "reason": .string(error.name), "detail": .string(error.detail)])
            throw error
        }
    }

    static func json(_ issued: TokenIssuer.IssuedToken) -> String {
        var out = "{\"uptoken\":" + JSONText.quoted(issued.uptoken)
        out += ",\"bucket\":" + JSONText.quoted(issued.bucket)
        out += ",\"key\":" + (issued.key.map(JSONText.quoted) ?? "null")
        out += ",\"expiresAt\":" + String(issued.expiresAt)
        out += ",\"upHosts\":[" + issued.upHosts.map(JSONText.quoted).joined(separator: ",") + "]"
        out += ",\"traceId\":" + JSONText.quoted(issued.traceID) + "}"
        return out
    }
}
