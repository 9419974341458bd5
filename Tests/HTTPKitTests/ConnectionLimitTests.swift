import Foundation
import HTTPKit
import NativeHTTP
import TestSupport
import Testing

/// The slow-loris defences of ``HTTPServer/Configuration``: a head deadline that libmicrohttpd's
/// idle timeout does not give, and a per-address connection limit (issue 5's fuzz suite found a
/// client trickling header bytes could hold a connection for ever).
@Suite("HTTPServer connection limits")
struct ConnectionLimitTests {
    private static func router() -> Router {
        var router = Router()
        router.get("/ok") { _, _ in Response.json(raw: Array(#"{"ok":true}"#.utf8)) }
        return router
    }

    @Test func aHeadTricklingInPastTheDeadlineIsCutWhileOthersAreServed() async throws {
        let configuration = HTTPServer.Configuration(
            threadCount: 2, handlerTimeout: .seconds(5), shutdownGracePeriod: .seconds(2),
            headerTimeout: .seconds(2))
        try await withServer(Self.router(), configuration: configuration) { port, server, _ in
            let outcome = try await BlockingIO.run { () throws -> (closedAfter: Double, bytes: [UInt8]) in
                let loris = try TCPConnection(port: port)
                defer { loris.close() }
                try loris.write("GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                let started = Date()
                // One header byte every 250 ms: never idle, never finished.
                while Date().timeIntervalSince(started) < 8 {
                    do {
                        try loris.write("X")
                    } catch {
                        return (Date().timeIntervalSince(started), [])
                    }
                    if let bytes = try? loris.read(timeoutMilliseconds: 250) {
                        return (Date().timeIntervalSince(started), bytes)
                    }
                }
                return (Date().timeIntervalSince(started), [0])
            }
            // Cut between the 2 s deadline and the next once-a-second sweep (plus slack), with
            // no response bytes.
            #expect(outcome.bytes.isEmpty)
            #expect(outcome.closedAfter >= 1.5 && outcome.closedAfter < 5)
            #expect(server.headerTimeouts == 1)
            // The server still serves.
            #expect(try await fetch(port, "GET", "/ok").status == 200)
        }
    }

    @Test func aKeptAliveConnectionThatKeepsSendingRequestsIsNotCut() async throws {
        let configuration = HTTPServer.Configuration(
            threadCount: 2, handlerTimeout: .seconds(5), shutdownGracePeriod: .seconds(2), headerTimeout: .seconds(1))
        try await withServer(Self.router(), configuration: configuration) { port, server, _ in
            let answered = try await BlockingIO.run { () throws -> Int in
                let client = try TCPConnection(port: port)
                defer { client.close() }
                var answered = 0
                // 3 s of requests on one connection, each head sent at once.
                for _ in 0..<12 {
                    try client.write("GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                    var reply: [UInt8] = []
                    while !String(decoding: reply, as: UTF8.self).hasSuffix(#"{"ok":true}"#) {
                        let bytes = try client.read(timeoutMilliseconds: 2000)
                        if bytes.isEmpty { return answered }
                        reply += bytes
                    }
                    answered += 1
                    Thread.sleep(forTimeInterval: 0.25)
                }
                return answered
            }
            #expect(answered == 12)
            #expect(server.headerTimeouts == 0)
        }
    }

    @Test func connectionsBeyondThePerAddressLimitAreRefused() async throws {
        let configuration = HTTPServer.Configuration(
            threadCount: 2, handlerTimeout: .seconds(5), shutdownGracePeriod: .seconds(2), maxConnectionsPerAddress: 2)
        try await withServer(Self.router(), configuration: configuration) { port, _, _ in
            let results = try await BlockingIO.run { () throws -> [Bool] in
                let held = try (0..<2).map { _ in try TCPConnection(port: port) }
                defer { held.forEach { $0.close() } }
                for connection in held { try connection.write("GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\n") }
                Thread.sleep(forTimeInterval: 0.2)
                // The third from the same address is closed at accept: end of stream, no reply.
                let third = try TCPConnection(port: port)
                defer { third.close() }
                try? third.write("GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                let refused = (try? third.read(timeoutMilliseconds: 2000))?.isEmpty ?? false
                // Once one is gone, a new one is served.
                held[0].close()
                Thread.sleep(forTimeInterval: 0.2)
                let served = (try? TestHTTPClient.request(port: port, "GET", "/ok").status) == 200
                return [refused, served]
            }
            #expect(results == [true, true])
        }
    }
}
