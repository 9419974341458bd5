import Foundation
import HTTPKit
import HTTPTransport
import Testing
import TestSupport

/// ``StreamingHTTPTransport/stream(_:body:)`` of every ``TransportUnderTest``: request bodies produced while sent and response bodies read
/// as they arrive, with producers and readers slower than the socket so the transfer pauses and
/// resumes many times. Sizes are a few windows (256 KiB) each: debug builds hash slowly.
@Suite struct CurlTransportStreamingTests {
    struct ProducerFailed: Error, Equatable {}

    /// `count` bytes of a fixed pattern in pieces of `piece` bytes, pausing every `pauseEvery`.
    static func pieces(count: Int, piece: Int, pauseEvery: Int = 0, failAfter: Int? = nil) -> AsyncThrowingStream<[UInt8], any Error> {
        AsyncThrowingStream { continuation in
            Task {
                var sent = 0, index = 0
                while sent < count {
                    if let failAfter, sent >= failAfter { return continuation.finish(throwing: ProducerFailed()) }
                    let n = min(piece, count - sent)
                    continuation.yield(Self.bytes(sent..<(sent + n)))
                    sent += n
                    index += 1
                    if pauseEvery > 0, index % pauseEvery == 0 { try? await Task.sleep(for: .milliseconds(5)) }
                }
                continuation.finish()
            }
        }
    }

    static func bytes(_ range: Range<Int>) -> [UInt8] { BytePattern.bytes(range) }

    static func router(downloadSize: Int) -> Router {
        var router = CurlTransportUploadTests.hashingRouter()
        let body = bytes(0..<downloadSize)
        router.get("/download") { _, _ in Response(body: body) }
        return router
    }

    @Test(arguments: TransportUnderTest.allCases)
    func streamedUploadArrivesExactly(_ kind: TransportUnderTest) async throws {
        let length = 6 << 20
        let transport = try kind.make()
        try await withServer(Self.router(downloadSize: 0)) { port in
            let response = try await transport.stream(
                TransportRequest(method: "PUT", url: "http://127.0.0.1:\(port)/upload"),
                body: StreamedRequestBody(length: Int64(length), pieces: Self.pieces(count: length, piece: 40_000, pauseEvery: 16)))
            #expect(response.status == 200)
            let text = String(decoding: try await response.body.collect(upTo: 1024), as: UTF8.self)
            #expect(text == "\(length) \(checksum(Self.bytes(0..<length)))")
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func slowReaderGetsEveryByteInOrder(_ kind: TransportUnderTest) async throws {
        let size = 8 << 20
        let transport = try kind.make()
        try await withServer(Self.router(downloadSize: size)) { port in
            let response = try await transport.stream(
                TransportRequest(method: "GET", url: "http://127.0.0.1:\(port)/download"), body: nil)
            #expect(response.status == 200)
            #expect(response.head[header: "content-length"] == "\(size)")
            var hash = FNV1a(), total = 0, reads = 0, largest = 0
            for try await piece in response.body {
                hash.update(piece)
                total += piece.count
                largest = max(largest, piece.count)
                reads += 1
                if reads % 4 == 0 { try await Task.sleep(for: .milliseconds(3)) }
            }
            #expect(total == size)
            #expect(hash.value == checksum(Self.bytes(0..<size)))
            // The reader never holds more than the window plus one libcurl write (16 KiB).
            #expect(largest <= (256 << 10) + (16 << 10))
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func producerFailureIsWhatTheCallerSees(_ kind: TransportUnderTest) async throws {
        let transport = try kind.make()
        try await withServer(Self.router(downloadSize: 0)) { port in
            await #expect(throws: ProducerFailed.self) {
                _ = try await transport.stream(
                    TransportRequest(method: "PUT", url: "http://127.0.0.1:\(port)/upload"),
                    body: StreamedRequestBody(length: 8 << 20, pieces: Self.pieces(count: 8 << 20, piece: 65_536, failAfter: 3 << 20)))
            }
            // The transport is still usable.
            let again = try await transport.send(TransportRequest(method: "PUT", url: "http://127.0.0.1:\(port)/upload", body: .bytes([1, 2, 3])))
            #expect(again.text == "3 \(checksum([1, 2, 3]))")
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func bodyShorterThanDeclaredFails(_ kind: TransportUnderTest) async throws {
        let transport = try kind.make()
        try await withServer(Self.router(downloadSize: 0)) { port in
            let error = await transportError {
                _ = try await transport.stream(
                    TransportRequest(method: "PUT", url: "http://127.0.0.1:\(port)/upload"),
                    body: StreamedRequestBody(length: 1 << 20, pieces: Self.pieces(count: 1000, piece: 100)))
            }
            #expect(error?.kind == .io(errno: EIO))
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func bodyLongerThanDeclaredFails(_ kind: TransportUnderTest) async throws {
        let transport = try kind.make()
        try await withServer(Self.router(downloadSize: 0)) { port in
            let error = await transportError {
                _ = try await transport.stream(
                    TransportRequest(method: "PUT", url: "http://127.0.0.1:\(port)/upload"),
                    body: StreamedRequestBody(length: 1000, pieces: Self.pieces(count: 5000, piece: 700)))
            }
            #expect(error?.kind == .invalidRequest)
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func droppingTheBodyStopsTheTransfer(_ kind: TransportUnderTest) async throws {
        let transport = try kind.make()
        try await withServer(Self.router(downloadSize: 32 << 20)) { port in
            let start = ContinuousClock.now
            for _ in 0..<3 {
                let response = try await transport.stream(
                    TransportRequest(method: "GET", url: "http://127.0.0.1:\(port)/download"), body: nil)
                var iterator = response.body.makeAsyncIterator()
                let first = try await iterator.next()
                #expect(first?.isEmpty == false)
                response.body.cancel()
                await #expect(throws: TransportError.self) { _ = try await iterator.next() }
            }
            // Three abandoned 32 MiB bodies must not have been read to their ends first.
            #expect(secondsSince(start) < 30)
            let small = try await transport.send(TransportRequest(method: "PUT", url: "http://127.0.0.1:\(port)/upload", body: .bytes([7])))
            #expect(small.status == 200)
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func emptyAndHeadBodiesEndAtOnce(_ kind: TransportUnderTest) async throws {
        let transport = try kind.make()
        try await withServer(Self.router(downloadSize: 0)) { port in
            for method in ["GET", "HEAD"] {
                let response = try await transport.stream(
                    TransportRequest(method: method, url: "http://127.0.0.1:\(port)/download"), body: nil)
                #expect(response.status == 200)
                #expect(try await response.body.collect(upTo: 10).isEmpty)
            }
        }
    }
}
