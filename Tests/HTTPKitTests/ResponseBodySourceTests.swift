import Basics
import HTTPKit
import NativeTestSupport
import Synchronization
import TestSupport
import Testing

/// Streamed bodies (`Response.Body.stream`) on a live server: byte-exact, a source slower than
/// the client, a source failing mid-body, a client going away, a `HEAD`, and a shutdown while a
/// body waits for its source.
@Suite("Streamed response bodies")
struct ResponseBodySourceTests {
    @Test func fiveMebibytesArriveByteExact() async throws {
        // An odd piece size, so pieces straddle MHD's 64 KiB reads.
        let source = PatternSource(total: 5 << 20, pieceSize: 100_003)
        try await withServer(Self.router(source)) { port, _, _ in
            let response = try await fetch(port, "GET", "/stream")
            #expect(response.status == 200)
            #expect(response.headers["Content-Length"] == "\(5 << 20)")
            #expect(response.body.count == 5 << 20)
            #expect(response.body == PatternSource.bytes(0..<(5 << 20)))
        }
        #expect(!source.wasCancelled)
    }

    @Test func aSourceSlowerThanTheClientStillCompletes() async throws {
        let source = PatternSource(total: 1 << 20, pieceSize: 64 << 10, delay: .milliseconds(15))
        try await withServer(Self.router(source)) { port, _, _ in
            let response = try await fetch(port, "GET", "/stream")
            #expect(response.status == 200 && response.body == PatternSource.bytes(0..<(1 << 20)))
        }
    }

    @Test func aSourceThrowingMidBodyCutsTheConnectionAndTheServerStaysUp() async throws {
        let source = PatternSource(total: 2 << 20, pieceSize: 256 << 10, failAt: 1 << 20)
        var router = Self.router(source)
        router.get("/ok") { _, _ in Response(body: Array("ok".utf8)) }
        try await withServer(router) { port, _, _ in
            // Head and the first MiB arrive, then the connection closes short of Content-Length.
            await #expect(throws: TestHTTPClientError.closed) { try await fetch(port, "GET", "/stream") }
            let next = try await fetch(port, "GET", "/ok")
            #expect(next.status == 200 && next.text == "ok")
        }
        #expect(!source.wasCancelled)  // it failed on its own; nothing to cancel
    }

    @Test func aSourceEndingShortCutsTheConnection() async throws {
        let source = PatternSource(total: 1 << 20, pieceSize: 64 << 10, declared: 2 << 20)
        try await withServer(Self.router(source)) { port, _, _ in
            await #expect(throws: TestHTTPClientError.closed) { try await fetch(port, "GET", "/stream") }
        }
    }

    @Test func aClientGoingAwayMidBodyCancelsTheSource() async throws {
        let source = PatternSource(total: 256 << 20, pieceSize: 256 << 10)
        try await withServer(Self.router(source)) { port, _, _ in
            let received = try await BlockingIO.run { () -> Int in
                let connection = try TCPConnection(port: port)
                try connection.write("GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                var received = 0
                while received < 512 << 10 { received += try connection.read().count }
                connection.close()
                return received
            }
            #expect(received >= 512 << 10)
            try await Self.waitUntil { source.wasCancelled }
            #expect(source.wasCancelled)
            // The window bounds what the source was asked for: far less than the 256 MiB declared.
            #expect(source.producedBytes < 64 << 20)
        }
    }

    @Test func headNeverPullsTheSource() async throws {
        let source = PatternSource(total: 1 << 20, pieceSize: 64 << 10)
        try await withServer(Self.router(source)) { port, _, _ in
            // TestHTTPClient would wait for a body after a HEAD: read the head off the socket.
            let head = try await BlockingIO.run { () -> String in
                let connection = try TCPConnection(port: port)
                defer { connection.close() }
                try connection.write("HEAD /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                return String(decoding: try connection.read(), as: UTF8.self)
            }
            #expect(head.hasPrefix("HTTP/1.1 200") && head.hasSuffix("\r\n\r\n"))
            #expect(head.contains("Content-Length: \(1 << 20)\r\n"))
            try await Self.waitUntil { source.wasCancelled }
        }
        #expect(source.wasCancelled && source.producedBytes == 0)
    }

    @Test func shutdownCutsABodyWaitingForItsSource() async throws {
        let source = PatternSource(total: 1 << 20, pieceSize: 64 << 10, stallAt: 128 << 10)
        try await withServer(Self.router(source)) { port, server, _ in
            let response = Task { try await fetch(port, "GET", "/stream") }
            try await Self.waitUntil { source.producedBytes >= 128 << 10 }
            try await Task.sleep(for: .milliseconds(100))  // the connection parks on the stalled source
            await server.shutdown()
            await #expect(throws: TestHTTPClientError.closed) { try await response.value }
        }
        #expect(source.wasCancelled)
    }

    // MARK: Helpers

    static func router(_ source: PatternSource) -> Router {
        var router = Router()
        router.get("/stream") { _, _ in
            Response(
                status: 200, headers: ["Content-Type": "application/octet-stream"],
                body: .stream(length: UInt64(source.declared), source: source))
        }
        return router
    }

    static func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<400 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
    }
}

/// A source of `total` deterministic bytes in pieces of `pieceSize`, optionally slow, failing
/// at `failAt`, stalling (until cancelled) at `stallAt`, or declared longer than it is.
final class PatternSource: ResponseBodySource {
    let total: Int
    let pieceSize: Int
    let delay: Duration?
    let failAt: Int?
    let stallAt: Int?
    let declared: Int
    private let state = Mutex((produced: 0, cancelled: false))

    struct Failure: Error {}

    init(
        total: Int, pieceSize: Int, delay: Duration? = nil, failAt: Int? = nil, stallAt: Int? = nil, declared: Int? = nil
    ) {
        self.total = total
        self.pieceSize = pieceSize
        self.delay = delay
        self.failAt = failAt
        self.stallAt = stallAt
        self.declared = declared ?? total
    }

    var wasCancelled: Bool { state.withLock { $0.cancelled } }
    var producedBytes: Int { state.withLock { $0.produced } }

    static func bytes(_ range: Range<Int>) -> [UInt8] {
        range.map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
    }

    func next() async throws -> [UInt8]? {
        if let delay { try await Task.sleep(for: delay) }
        let offset = state.withLock { $0.produced }
        if let failAt, offset >= failAt { throw Failure() }
        if let stallAt, offset >= stallAt { try await Task.sleep(for: .seconds(60)) }
        guard offset < total else { return nil }
        let end = min(total, offset + pieceSize)
        state.withLock { $0.produced = end }
        return Self.bytes(offset..<end)
    }

    func cancel() { state.withLock { $0.cancelled = true } }
}
