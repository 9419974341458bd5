import Basics
import HTTPKit
import Outbox
import UpCore

/// `POST /v1/callback`: verify the up server's signature and freshness on the raw request,
/// record the upload exactly once, answer with the record (which the up server relays to the
/// uploader). qiniu-protocol.md §3.4–3.5.
struct CallbackController: Sendable {
    let authenticator: CallbackAuthenticator
    let store: any UploadRecordStore
    let clock: any WallClock
    let metrics: BizMetrics
    /// The webhook deliveries a new record causes (none without webhooks).
    var webhooks: @Sendable (UploadRecord) -> [OutboxMessage] = { _ in [] }

    /// Largest accepted callback body: the rendered callbackBody is small; 64 KiB leaves room for
    /// apps that extend it.
    static let maxBodyBytes = 64 << 10

    func register(on router: inout Router) {
        router.post("/v1/callback", body: .collect(maxBytes: Self.maxBodyBytes)) { request, context in
            try await receive(request, context)
        }
    }

    func receive(_ request: Request, _ context: RequestContext) async throws -> Response {
        let payload: CallbackPayload
        do {
            let headers = request.headers.map { ($0.name, $0.value) }
            let verified = try authenticator.authenticate(
                authorization: request.headers["Authorization"], method: request.method.rawValue,
                target: request.target, headers: headers, body: request.body, now: clock.unixSeconds)
            payload = try CallbackPayload.parse(body: request.body, contentType: request.headers["Content-Type"])
            context.logger.debug("callback verified", ["reqid": .string(context.requestID), "scheme": .string("\(verified.scheme)")])
        } catch {
            metrics.callbacksRejected.increment([error.name])
            context.logger.warning(
                "callback rejected",
                ["reqid": .string(context.requestID), "reason": .string(error.name), "detail": .string(error.detail),
                 "remote": .string(request.remoteAddress)])
            throw error
        }

        let upload = NewUploadRecord(
            clientID: payload.clientID, bucket: payload.bucket, key: payload.key, hash: payload.hash,
            fsize: payload.fsize, mimeType: payload.mimeType, fname: payload.fname, endUser: payload.endUser,
            traceID: payload.traceID, vars: payload.vars)
        let result: (record: UploadRecord, created: Bool)
        do {
            result = try await store.record(
                upload, receivedAt: Int64((clock.now() * 1000).rounded(.down)), webhooks: webhooks)
        } catch {
            metrics.storeErrors.increment()
            context.logger.error("store failed", ["reqid": .string(context.requestID), "error": .string("\(error)")])
            throw BizError.storeUnavailable
        }
        (result.created ? metrics.callbacksAccepted : metrics.callbacksDuplicate).increment()
        context.logger.info(
            result.created ? "upload recorded" : "duplicate callback",
            ["reqid": .string(context.requestID), "trace": .string(payload.traceID), "id": .string(result.record.id),
             "bucket": .string(payload.bucket), "key": .string(payload.key), "hash": .string(payload.hash),
             "fsize": .int(payload.fsize)])
        return Response.json(raw: Array(result.record.json.utf8), headers: ["Cache-Control": "no-store"])
    }
}
