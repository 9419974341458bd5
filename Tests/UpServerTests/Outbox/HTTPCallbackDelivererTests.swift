import Basics
import HTTPTransport
import NativeCrypto
import Testing
import TestSupport
import UpCore
@testable import UpServer

@Suite("HTTPCallbackDeliverer")
struct HTTPCallbackDelivererTests {
    static let keys = ["test-ak": "test-sk", "other-ak": "other-sk"]
    static let formBody = "key=photos%2Fcat.jpg&hash=Fqr0xh3cxeii2r7eDztILNmuqUNN&fsize=5&bucket=mybucket"
    let clock = ManualClock(1_900_000_000)
    let logs = LogSink.memory()

    func deliverer(_ transport: any HTTPTransport, timeout: Double = 5) -> HTTPCallbackDeliverer {
        HTTPCallbackDeliverer(
            keys: Self.keys, transport: transport, clock: clock, timeoutSeconds: timeout,
            logger: Logger(label: "test", sink: logs))
    }

    func entry(_ urls: [String], scheme: String = "qbox:test-ak", json: Bool = false, host: String? = nil) -> CallbackRequest {
        CallbackRequest(
            urls: urls, host: host, body: json ? #"{"key":"a","hash":"h"}"# : Self.formBody,
            contentType: json ? "application/json" : QBoxSignature.formContentType, authScheme: scheme)
    }

    func verify(_ received: CallbackTarget.Received) throws -> CallbackVerifier.Verified {
        try CallbackVerifier(keys: KeyRing(Self.keys)).verify(
            authorization: received.header("Authorization"), method: received.method, target: received.target,
            headers: received.headers, body: received.body)
    }

    @Test("QBox form callback: exact content type, body signed, verifies with CallbackVerifier; reply relayed")
    func qboxForm() async throws {
        let target = try CallbackTarget()
        let transport = try CurlTransport()
        target.script(.init(body: #"{"recorded":1}"#))
        let outcome = await deliverer(transport).deliver(entry([target.url("/callback?x=1")]))
        await target.stop()
        #expect(outcome == .delivered(reply: Array(#"{"recorded":1}"#.utf8)))
        let received = try #require(target.received.first)
        #expect(received.target == "/callback?x=1")
        #expect(received.header("Content-Type") == "application/x-www-form-urlencoded")
        #expect(received.header("Authorization")?.hasPrefix("QBox test-ak:") == true)
        #expect(String(decoding: received.body, as: UTF8.self) == Self.formBody)
        let verified = try verify(received)
        #expect(verified.scheme == .qbox && verified.accessKey == "test-ak")
        // A tampered body must not verify: the form body is covered (§3.2).
        var tampered = received
        tampered.body = Array((Self.formBody + "1").utf8)
        #expect(throws: UpError.self) { try verify(tampered) }
    }

    @Test("spec §10.2 vector: QBox over /callback?x=1 with the form body")
    func specVector() throws {
        let vector = "key=photos%2Fcat.jpg&hash=Fqr0xh3cxeii2r7eDztILNmuqUNN&fsize=5&bucket=mybucket&name=%E4%B8%83%E7%89%9B"
        var callback = entry(["http://127.0.0.1:8080/callback?x=1"])
        callback.body = vector
        let sut = deliverer(RecordingTransport())
        let (scheme, accessKey, mac) = try #require(sut.credentials(for: callback.authScheme))
        let request = sut.makeRequest(url: callback.urls[0], entry: callback, scheme: scheme, accessKey: accessKey, mac: mac)
        #expect(request.headers.first { $0.0 == "Authorization" }?.1 == "QBox test-ak:dBQoOMC8BTQA_VlNlhaSW01ozOI=")
        #expect(request.method == "POST" && request.timeout == .seconds(5))
    }

    @Test("Qiniu scheme: X-Qiniu-Date from the clock, Host signed (callbackHost when set)")
    func qiniuScheme() async throws {
        let target = try CallbackTarget()
        let transport = try CurlTransport()
        let sut = deliverer(transport)
        let first = await sut.deliver(entry([target.url("/cb")], scheme: "qiniu:other-ak", json: true))
        let second = await sut.deliver(entry([target.url("/cb?y=2")], scheme: "Qiniu", host: "biz.example.com"))
        await target.stop()
        guard case .delivered = first, case .delivered = second else {
            Issue.record("not delivered: \(first) \(second)")
            return
        }
        let received = target.received
        try #require(received.count == 2)
        #expect(received[0].header("X-Qiniu-Date") == QiniuDate.format(1_900_000_000))
        #expect(received[0].header("Host") == "127.0.0.1:\(target.port)")
        let verified = try verify(received[0])
        #expect(verified.scheme == .qiniu && verified.accessKey == "other-ak" && verified.signedDate == 1_900_000_000)
        // No AK in the entry: the first configured pair sorted by AK ("other-ak" < "test-ak").
        #expect(received[1].header("Host") == "biz.example.com")
        #expect(try verify(received[1]).accessKey == "other-ak")
        // JSON body is signed under Qiniu: tampering breaks it.
        var tampered = received[0]
        tampered.body = Array(#"{"key":"b","hash":"h"}"#.utf8)
        #expect(throws: UpError.self) { try verify(tampered) }
    }

    @Test("the next URL is used when the first fails (connection refused, then non-200)")
    func nextURL() async throws {
        let target = try CallbackTarget()
        let transport = try CurlTransport()
        target.script(.init(status: 500, body: #"{"error":"x"}"#))
        let outcome = await deliverer(transport).deliver(entry([
            "http://127.0.0.1:1/refused", target.url("/first"), target.url("/second?t=secret"),
        ]))
        await target.stop()
        #expect(outcome == .delivered(reply: Array(#"{"ok":true}"#.utf8)))
        #expect(target.received.map(\.target) == ["/first", "/second?t=secret"])
        #expect(try verify(target.received[1]).accessKey == "test-ak")
    }

    @Test("all URLs failing → .failed with a short reason naming URLs (no query) and statuses")
    func allFail() async throws {
        let target = try CallbackTarget()
        let transport = try CurlTransport()
        target.script(.init(status: 401, body: #"{"error":"bad signature"}"#), .init(status: 200, body: "plain text", contentType: "text/plain"))
        let outcome = await deliverer(transport).deliver(entry([target.url("/a?token=s3cret"), target.url("/b")]))
        await target.stop()
        guard case .failed(let reason) = outcome else {
            Issue.record("expected failure, got \(outcome)")
            return
        }
        #expect(reason == "callback url \(target.url("/a")): status 401; callback url \(target.url("/b")): reply is not JSON")
        #expect(!reason.contains("s3cret"))
        #expect(!logs.capturedLines.joined().contains("s3cret"))
        #expect(!logs.capturedLines.joined().contains("QBox"))
    }

    @Test("a slow callback times out after the configured per-URL timeout")
    func timeout() async throws {
        let target = try CallbackTarget()
        let transport = try CurlTransport()
        target.script(.init(delay: .seconds(3)))
        let started = ContinuousClock.now
        let outcome = await deliverer(transport, timeout: 0.5).deliver(entry([target.url("/slow")]))
        let elapsed = ContinuousClock.now - started
        #expect(outcome == .failed(reason: "callback url \(target.url("/slow")): timeout"))
        #expect(elapsed < .seconds(2))
        await target.stop()
    }

    /// Found by scripts/load/run: with a per-host cap on the callback transport, callbacks beyond
    /// the cap waited for a pooled connection and that wait ran down their timeout, so a burst of
    /// uploads got 579 "timeout" from a biz-server that answered each callback well in time.
    /// 80 callbacks at once, each answered after 0.4 s, 1.5 s timeout: all must be delivered
    /// (queued 16 at a time they would take 5 rounds, 2 s).
    @Test("a burst of callbacks to one host: each gets the whole timeout, none waits for a connection")
    func burstToOneHost() async throws {
        let target = try CallbackTarget()
        target.answerByDefault(.init(delay: .milliseconds(400)))
        let sut = deliverer(try UpServer.callbackTransport(), timeout: 1.5)
        let callback = entry([target.url("/burst")])
        let outcomes = await withTaskGroup(of: CallbackOutcome.self) { group in
            for _ in 0..<80 { group.addTask { await sut.deliver(callback) } }
            var all: [CallbackOutcome] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        await target.stop()
        let failed = outcomes.filter { if case .delivered = $0 { false } else { true } }.count
        #expect(outcomes.count == 80)
        #expect(failed == 0, "\(failed) of 80 callbacks not delivered")
        #expect(target.received.count == 80)
    }

    @Test("transport failures map to short reasons (RecordingTransport)")
    func transportErrors() async {
        let transport = RecordingTransport([
            .failure(TransportError(.connect, "refused 10.0.0.1")), .failure(TransportError(.tooLarge, "big")),
        ])
        let outcome = await deliverer(transport).deliver(entry(["http://a.example/cb", "http://b.example/cb"]))
        #expect(outcome == .failed(reason: "callback url http://a.example/cb: connection failed; callback url http://b.example/cb: reply too large"))
        #expect(transport.requests.count == 2)
        #expect(transport.requests.allSatisfy { $0.maxResponseBytes == HTTPCallbackDeliverer.maxReplyBytes })
    }

    @Test("CallbackURL: authority and redaction", arguments: [
        ("http://u:p@h.example:8080/p?q=1#f", "h.example:8080", "http://h.example:8080/p"),
        ("https://[::1]:9/x", "[::1]:9", "https://[::1]:9/x"),
        ("http://h.example?q", "h.example", "http://h.example"),
        // Delimiters by byte: a combining mark after "@" or "?" must not hide it (the query,
        // which may hold a token, would be logged; the user info would go into Host).
        ("http://u:p@\u{301}h.example/cb?\u{301}token=s", "\u{301}h.example", "http://\u{301}h.example/cb"),
    ])
    func callbackURL(url: String, authority: String, redacted: String) {
        #expect(CallbackURL.authority(of: url) == authority)
        #expect(CallbackURL.redacted(url) == redacted)
    }
}
