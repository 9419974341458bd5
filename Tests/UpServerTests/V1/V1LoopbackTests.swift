import Foundation
import HTTPKit
import NativeCrypto
import NativeHTTP
import TestSupport
import Testing
import UpCore
@testable import UpServer

/// The v1 flow over a real socket: HTTPKit hands the handlers a 4 MiB body in many small
/// pieces, which the in-process harness never does.
@Suite("v1 over loopback")
struct V1LoopbackTests {
    @Test func mkblkBputAndMkfileOverTheWire() async throws {
        let harness = UpServerHarness { $0.port = 0 }
        let port = try harness.server.start()
        let data = V1Data.bytes(V1Data.block + 1_000_003, seed: 9)
        let token = harness.token()
        let auth = [("Authorization", "UpToken \(token)")]
        let first = try await BlockingIO.run {
            try TestHTTPClient.request(port: port, "POST", "/mkblk/\(V1Data.block)", headers: auth, body: Array(data[0..<V1Data.block]))
        }
        #expect(first.status == 200, "\(first.text)")
        let firstCtx = try #require(Self.json(first.body)["ctx"] as? String)
        #expect(Self.json(first.body)["crc32"] as? Int == Int(CRC32.checksum(data[0..<V1Data.block])))
        #expect(Self.json(first.body)["host"] as? String == "http://127.0.0.1:\(port)")
        let rest = Array(data[V1Data.block...])
        let second = try await BlockingIO.run {
            try TestHTTPClient.request(port: port, "POST", "/mkblk/\(rest.count)", headers: auth, body: Array(rest[0..<600_000]))
        }
        let secondCtx = try #require(Self.json(second.body)["ctx"] as? String)
        let third = try await BlockingIO.run {
            try TestHTTPClient.request(port: port, "POST", "/bput/\(secondCtx)/600000", headers: auth, body: Array(rest[600_000...]))
        }
        #expect(third.status == 200, "\(third.text)")
        let lastCtx = try #require(Self.json(third.body)["ctx"] as? String)
        let made = try await BlockingIO.run {
            try TestHTTPClient.request(
                port: port, "POST", V1Paths.mkfile(data.count, key: "wire.bin"), headers: auth,
                body: Array("\(firstCtx),\(lastCtx)".utf8))
        }
        #expect(made.status == 200, "\(made.text)")
        #expect(made.headers["X-Reqid"] != nil)
        #expect(Self.json(made.body)["hash"] as? String == Etag.of(data))
        #expect(try await harness.content(key: "wire.bin") == data)
        await harness.server.shutdown()
    }

    /// scripts/chaos/client-crash: a client killed mid-bput can leave its request waiting for body
    /// bytes (the server missed the closed connection) while holding the block; every resume of
    /// that block got 599 "another chunk ... is in progress" until the 30 s handler timeout. Here
    /// the first request is a connection that sends the head and part of the body, then nothing:
    /// the retry of the same chunk must preempt it and succeed, with the block's bytes right.
    @Test func aRetriedChunkPreemptsAStalledRequestForTheSameBlock() async throws {
        let harness = UpServerHarness { $0.port = 0 }
        let port = try harness.server.start()
        let data = V1Data.bytes(V1Data.block, seed: 11)
        let token = harness.token()
        let auth = [("Authorization", "UpToken \(token)")]
        let first = try await BlockingIO.run {
            try TestHTTPClient.request(port: port, "POST", "/mkblk/\(V1Data.block)", headers: auth, body: Array(data[0..<(1 << 20)]))
        }
        let ctx = try #require(Self.json(first.body)["ctx"] as? String)
        let chunk = Array(data[(1 << 20)...])
        let stalled = try TCPConnection(port: port)
        try stalled.write(
            "POST /bput/\(ctx)/\(1 << 20) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: UpToken \(token)\r\n"
                + "Content-Type: application/octet-stream\r\nContent-Length: \(chunk.count)\r\n\r\n")
        try stalled.write(chunk[0..<100_000])
        // Let the stalled request take the block and write what it got.
        var waited = 0
        while harness.server.services.locks.heldCount == 0, waited < 200 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        #expect(harness.server.services.locks.heldCount == 1, "the stalled request never took the block")
        let started = ContinuousClock.now
        let retry = try await BlockingIO.run {
            try TestHTTPClient.request(port: port, "POST", "/bput/\(ctx)/\(1 << 20)", headers: auth, body: chunk)
        }
        #expect(retry.status == 200, "\(retry.status) \(retry.text)")
        #expect(ContinuousClock.now - started < .seconds(5))
        let lastCtx = try #require(Self.json(retry.body)["ctx"] as? String)
        let made = try await BlockingIO.run {
            try TestHTTPClient.request(
                port: port, "POST", V1Paths.mkfile(data.count, key: "preempt.bin"), headers: auth, body: Array(lastCtx.utf8))
        }
        #expect(made.status == 200, "\(made.text)")
        #expect(try await harness.content(key: "preempt.bin") == data)
        stalled.close()
        await harness.server.shutdown()
    }

    private static func json(_ body: [UInt8]) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]) ?? [:]
    }
}
