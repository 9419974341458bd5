import Basics
import BizServer
import Foundation
import HTTPKit
import NativeCrypto
import TestSupport
import UpCore

/// A biz-server wired to an in-memory store and a manual clock, driven in-process through its
/// router (no socket), plus helpers that play the up server: render the signed callbackBody of an
/// issued token the way an up server does (spec §2) and sign the callback (spec §3.2–3.3).
struct BizServerHarness {
    static let accessKey = "test-ak"
    static let secretKey = "test-sk"
    static let demoKey = "demo-api-key"
    static let otherKey = "other-api-key"
    static let adminToken = "harness-admin-token-0123456789"

    let server: BizServer
    let store: InMemoryUploadRecordStore
    let keys: InMemoryAPIKeyStore
    let clock: ManualClock
    let logs: LogSink
    let mac = HMACSHA1(key: Array(secretKey.utf8))

    init(
        rateLimit: BizServerConfiguration.RateLimit = .init(tokensPerSecond: 1000, burst: 1000),
        replay: BizServerConfiguration.ReplayProtection = .init(),
        demo: (inout BizServerConfiguration.Client) -> Void = { _ in },
        jwt: JWTConfiguration? = nil,
        access: BizServerConfiguration.Access = .init(
            adminTokenSHA256: BizServerConfiguration.apiKeyHash(BizServerHarness.adminToken)),
        wrapStore: (InMemoryUploadRecordStore) -> any UploadRecordStore = { $0 },
        cors: CORSPolicy = .off,
        postgres: PostgresBizDatabase? = nil,
        clock: ManualClock = ManualClock(1_900_000_000)
    ) {
        var demoClient = BizServerConfiguration.Client(
            id: "demo", apiKeySHA256: BizServerConfiguration.apiKeyHash(Self.demoKey), bucket: "demo",
            keyPrefix: "{client}/", fsizeMin: 1, fsizeLimit: 1 << 30, vars: ["x:app": "upgate-test"])
        demo(&demoClient)
        let other = BizServerConfiguration.Client(
            id: "other", apiKeySHA256: BizServerConfiguration.apiKeyHash(Self.otherKey), bucket: "demo",
            keyPrefix: "other/")
        var configuration = BizServerConfiguration(
            port: 8080, accessKey: Self.accessKey, secretKey: Self.secretKey, clients: [demoClient, other],
            rateLimit: rateLimit, replay: replay)
        configuration.jwt = jwt
        configuration.access = access
        configuration.cors = cors
        store = InMemoryUploadRecordStore()
        keys = InMemoryAPIKeyStore()
        self.clock = clock
        logs = LogSink.memory()
        // With `postgres`, every store is the shared database's (one harness per instance); the
        // in-memory `store` and `keys` are then unused.
        server = BizServer(
            configuration: configuration, store: postgres?.records ?? wrapStore(store),
            keys: postgres?.keys ?? keys, clock: clock, logger: Logger(label: "test", sink: logs),
            rateLimits: postgres?.rateLimits)
    }

    /// Sends one request through the router.
    func send(
        _ method: HTTPMethod, _ target: String, headers: HTTPHeaders = [:], body: [UInt8] = [], remoteAddress: String = ""
    ) async -> Response {
        let request = Request(method: method, target: target, headers: headers, body: body, remoteAddress: remoteAddress)
        return await server.router.respond(to: request, logger: Logger(label: "test", sink: logs))
    }

    /// `POST /v1/uptoken` as client `apiKey` with a JSON body.
    func token(_ json: String, apiKey: String = demoKey) async -> Response {
        await send(
            .post, "/v1/uptoken", headers: ["Authorization": "Bearer \(apiKey)", "Content-Type": "application/json"],
            body: Array(json.utf8))
    }

    /// An admin API request with `token` (the harness's admin token unless given; nil: none).
    func admin(
        _ method: HTTPMethod, _ target: String, body: String? = nil, token: String? = BizServerHarness.adminToken
    ) async -> Response {
        var headers: HTTPHeaders = [:]
        if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
        return await send(method, target, headers: headers, body: Array((body ?? "").utf8))
    }

    /// `POST /v1/uptoken` as an end user presenting `jwt`.
    func endUserToken(_ json: String = "{}", jwt: String) async -> Response {
        await send(
            .post, "/v1/uptoken", headers: ["Authorization": "Bearer \(jwt)", "Content-Type": "application/json"],
            body: Array(json.utf8))
    }

    /// Issues a token (to the demo client, or to the end user of `jwt`) and returns its verified policy.
    func issuedPolicy(_ json: String, jwt: String? = nil) async throws -> (response: [String: Any], policy: PutPolicy) {
        let response = if let jwt { await endUserToken(json, jwt: jwt) } else { await token(json) }
        guard response.status == 200 else { throw HarnessError.status(response.status, response.text) }
        let object = try response.jsonObject()
        let keys = KeyRing([Self.accessKey: Self.secretKey])
        let token = try UpToken.verify(object["uptoken"] as! String, keys: keys, now: Int64(clock.now()))
        return (object, token.policy)
    }

    /// The callback an up server sends for `policy` once the object exists: rendered body, target, content type.
    func callback(
        for policy: PutPolicy, key: String, etag: String = "Fqr0xh3cxeii2r7eDztILNmuqUNN", fsize: Int64 = 5,
        mimeType: String = "text/plain", fname: String = "a.txt"
    ) -> (target: String, body: [UInt8], contentType: String) {
        let variables = MagicVariables(
            bucket: policy.bucket, key: key, etag: etag, fsize: fsize, mimeType: mimeType, fname: fname,
            endUser: policy.endUser)
        let isJSON = policy.callbackBodyType == "application/json"
        let body = Array(
            (isJSON ? variables.renderJSON(policy.callbackBody ?? "") : variables.renderForm(policy.callbackBody ?? ""))
                .utf8)
        let url = MagicVariables.renderCallbackURL(policy.callbackUrl ?? "", body: body)
        let target = String(url.drop(while: { $0 != "/" }).dropFirst(2).drop(while: { $0 != "/" }))
        return (target, body, isJSON ? "application/json" : QBoxSignature.formContentType)
    }

    /// Posts a QBox-signed callback.
    func postQBox(target: String, body: [UInt8], contentType: String, signedBody: [UInt8]? = nil) async -> Response {
        let authorization = QBoxSignature.sign(
            target: target, body: signedBody ?? body, contentType: contentType, accessKey: Self.accessKey, mac: mac)
        return await send(
            .post, target, headers: ["Authorization": authorization, "Content-Type": contentType], body: body)
    }

    /// Posts a Qiniu-signed callback with a signed `X-Qiniu-Date` at `date` (Unix seconds), if given.
    func postQiniu(
        target: String, body: [UInt8], contentType: String, date: Int64?, signedBody: [UInt8]? = nil
    ) async -> Response {
        var headers: HTTPHeaders = ["Host": "127.0.0.1:8080", "Content-Type": contentType]
        if let date { headers.add(name: "X-Qiniu-Date", value: QiniuDate.format(date)) }
        let authorization = QiniuSignature.sign(
            method: "POST", target: target, host: "127.0.0.1:8080", contentType: contentType,
            headers: headers.map { ($0.name, $0.value) }, body: signedBody ?? body, accessKey: Self.accessKey,
            mac: mac)
        headers.add(name: "Authorization", value: authorization)
        return await send(.post, target, headers: headers, body: body)
    }
}

enum HarnessError: Error { case status(Int, String) }

extension Response {
    /// The body as text.
    var text: String { String(decoding: bodyBytes, as: UTF8.self) }

    /// The body as a JSON object.
    func jsonObject() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(bodyBytes)) as? [String: Any] else {
            throw HarnessError.status(status, text)
        }
        return object
    }

    /// The `error` member of a JSON error body.
    var errorText: String? { (try? jsonObject())?["error"] as? String }
}
