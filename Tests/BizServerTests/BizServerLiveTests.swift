import Basics
import BizServer
import Foundation
import HTTPKit
import NativeCrypto
import TestSupport
import Testing
import UpCore

@Suite("biz-server on a real port")
struct BizServerLiveTests {
    @Test func tokenRoundTripOverTCPWithTheCallbackURLFollowingTheBoundPort() async throws {
        let live = try LiveServer()
        defer { Task { await live.stop() } }
        let response = try await live.request(
            "POST", "/v1/uptoken", headers: [("Authorization", "Bearer demo-api-key"), ("X-Reqid", "client-req-1")],
            body: Array(#"{"key":"demo/live.bin"}"#.utf8))
        #expect(response.status == 200, "\(response.text)")
        #expect(response.headers["X-Reqid"] == "client-req-1")
        #expect(response.headers["Content-Type"] == "application/json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        let token = try UpToken.verify(
            try #require(object["uptoken"] as? String), keys: KeyRing(["test-ak": "test-sk"]),
            now: Int64(Date().timeIntervalSince1970))
        #expect(token.policy.callbackUrl == "http://127.0.0.1:\(live.port)/v1/callback")
        #expect(live.server.callbackURL == "http://127.0.0.1:\(live.port)/v1/callback")
    }

    @Test func aCallbackIsRecordedDurablyAndSurvivesARestart() async throws {
        let live = try LiveServer()
        let body = Array("bucket=demo&key=demo%2Fd&hash=Fh&fsize=9&clientId=demo".utf8)
        let authorization = QBoxSignature.sign(
            target: "/v1/callback", body: body, contentType: QBoxSignature.formContentType, accessKey: "test-ak",
            mac: HMACSHA1(key: Array("test-sk".utf8)))
        let headers = [("Authorization", authorization), ("Content-Type", QBoxSignature.formContentType)]
        let first = try await live.request("POST", "/v1/callback", headers: headers, body: body)
        #expect(first.status == 200, "\(first.text)")
        await live.server.shutdown()

        // Same data directory, new process state: the redelivery is recognised as the same upload.
        let store = try SQLiteUploadRecordStore(
            path: live.directory.appending(path: "uploads.sqlite3").path, durableWrites: true)
        #expect(try await store.count() == 1)
        let (record, created) = try await store.record(
            NewUploadRecord(clientID: "demo", bucket: "demo", key: "demo/d", hash: "Fh", fsize: 9), receivedAt: 0)
        #expect(!created)
        let firstReply = try #require(try JSONSerialization.jsonObject(with: Data(first.body)) as? [String: Any])
        #expect(record.id == firstReply["id"] as? String)
        try? FileManager.default.removeItem(at: live.directory)
    }

    @Test func hostileInputGetsJSONErrorsAndTheServerKeepsServing() async throws {
        let live = try LiveServer()
        defer { Task { await live.stop() } }
        let cases: [(String, String, [(String, String)], [UInt8], Int)] = [
            ("GET", "/nope", [], [], 404),
            ("DELETE", "/v1/uptoken", [], [], 405),
            ("POST", "/v1/uptoken", [("Authorization", "Bearer demo-api-key")], Array("{not json".utf8), 400),
            ("POST", "/v1/uptoken", [("Authorization", "Bearer demo-api-key")], Array(repeating: 0x7B, count: 20_000), 413),
            ("POST", "/v1/callback", [("Authorization", "QBox test-ak:x:y")], Array("a=b".utf8), 401),
            ("POST", "/v1/callback", [("Authorization", "UpToken test-ak:eA==:eA==:eA==")], [], 401),
        ]
        for (method, target, headers, body, status) in cases {
            let response = try await live.request(method, target, headers: headers, body: body)
            #expect(response.status == status, "\(method) \(target): \(response.text)")
            #expect(response.headers["X-Reqid"] != nil)
            #expect((try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])?["error"] is String)
        }
        let huge = try await live.request("GET", "/healthz", headers: [("X-Padding", String(repeating: "p", count: 100_000))])
        #expect(huge.status >= 400)
        let health = try await live.request("GET", "/healthz")
        #expect(health.status == 200)
    }

    /// Issue 10, item 5: 10 MB to a route that takes 16 KiB (synchronous) or 64 KiB (collected in
    /// a task) is 413 JSON whether its length is announced or it comes chunked.
    @Test(arguments: [false, true])
    func anOversizedBodyGets413JSONChunkedOrNot(chunked: Bool) async throws {
        let live = try LiveServer()
        defer { Task { await live.stop() } }
        let port = live.port
        let body = [UInt8](repeating: 0x7B, count: 10_000_000)
        for (target, limit) in [("/v1/uptoken", 16 << 10), ("/v1/callback", 64 << 10)] {
            let response = try await BlockingIO.run {
                let client = try TestHTTPClient(port: port)
                defer { client.close() }
                return try client.requestAllowingEarlyReply(
                    "POST", target, headers: [("Authorization", "Bearer demo-api-key")], body: body, chunked: chunked)
            }
            #expect(response.status == 413, "\(target) chunked=\(chunked): \(response.text)")
            #expect(response.text == #"{"error":"request body exceeds \#(limit) bytes"}"#)
            #expect(response.headers["X-Reqid"] != nil)
        }
        let health = try await live.request("GET", "/healthz")
        #expect(health.status == 200)
    }
}
