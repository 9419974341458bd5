import Foundation
import HTTPKit
import HTTPTransport
import TestSupport
import Testing

/// File-region bodies and upload progress, for every ``TransportUnderTest``.
@Suite struct CurlTransportUploadTests {
    /// A PUT route that hashes the body as it streams in and answers `"<count> <fnv>"`.
    static func hashingRouter() -> Router {
        Router.hashingUploads(maxBytes: 64 << 20)
    }

    @Test(arguments: TransportUnderTest.allCases)
    func sixteenMebibyteFileRegionIsStreamedExactly(_ kind: TransportUnderTest) async throws {
        let prefix = 1 << 20 + 13, length = 16 << 20, suffix = 4099
        let bytes = (0..<(prefix + length + suffix)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
        let file = try TemporaryFile(bytes: bytes)
        defer { file.remove() }
        let expected = checksum(bytes[prefix..<(prefix + length)])
        let sent = Locked<[Int64]>([])
        let transport = try kind.make()
        try await withServer(Self.hashingRouter()) { port in
            let response = try await transport.send(TransportRequest(
                method: "PUT", url: "http://127.0.0.1:\(port)/upload",
                body: .file(path: file.path, offset: Int64(prefix), length: Int64(length)),
                progress: { bytes in sent.update { $0.append(bytes) } }
            ))
            #expect(response.status == 200)
            #expect(response.text == "\(length) \(expected)")
        }
        let reports = sent.value
        #expect(reports.count > 2)
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0 < $1 })
        #expect(reports.last == Int64(length))
    }

    @Test(arguments: TransportUnderTest.allCases)
    func bytesBodyProgressEndsAtBodySize(_ kind: TransportUnderTest) async throws {
        let payload = [UInt8](repeating: 9, count: 3 << 20)
        let sent = Locked<[Int64]>([])
        let transport = try kind.make()
        try await withServer(Self.hashingRouter()) { port in
            let response = try await transport.send(TransportRequest(
                method: "PUT", url: "http://127.0.0.1:\(port)/upload", body: .bytes(payload),
                progress: { bytes in sent.update { $0.append(bytes) } }
            ))
            #expect(response.text == "\(payload.count) \(checksum(payload))")
        }
        #expect(zip(sent.value, sent.value.dropFirst()).allSatisfy { $0 < $1 })
        #expect(sent.value.last == Int64(payload.count))
    }

    @Test(arguments: TransportUnderTest.allCases)
    func emptyFileRegionSendsAnEmptyBody(_ kind: TransportUnderTest) async throws {
        let file = try TemporaryFile(bytes: [1, 2, 3])
        defer { file.remove() }
        let transport = try kind.make()
        try await withServer(Self.hashingRouter()) { port in
            let response = try await transport.send(TransportRequest(
                method: "PUT", url: "http://127.0.0.1:\(port)/upload", body: .file(path: file.path, offset: 3, length: 0)
            ))
            #expect(response.text == "0 \(FNV1a().value)")
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func missingFileIsIOWithErrno(_ kind: TransportUnderTest) async throws {
        let transport = try kind.make()
        let error = await transportError {
            _ = try await transport.send(TransportRequest(
                method: "PUT", url: "http://127.0.0.1:1/upload",
                body: .file(path: "/nonexistent/upgate-\(UUID().uuidString)", offset: 0, length: 10)
            ))
        }
        #expect(error?.kind == .io(errno: ENOENT))
    }

    @Test(arguments: TransportUnderTest.allCases)
    func regionPastTheEndOfTheFileIsIOBeforeSending(_ kind: TransportUnderTest) async throws {
        let file = try TemporaryFile(bytes: [UInt8](repeating: 0, count: 100))
        defer { file.remove() }
        let transport = try kind.make()
        let error = await transportError {
            _ = try await transport.send(TransportRequest(
                method: "PUT", url: "http://127.0.0.1:1/upload", body: .file(path: file.path, offset: 50, length: 51)
            ))
        }
        #expect(error?.kind == .io(errno: EINVAL))
    }

    /// up-cli refills one buffer per chunk: once a send is answered, the transport must hold no
    /// reference to the bytes it sent, or the refill copies the chunk, and the freed copies
    /// fragment the heap (up-cli's peak RSS grew with the file's size while libcurl's transfer
    /// kept its body until the loop thread let go of it). What this catches is a transport that
    /// keeps the body at all; the window before the loop thread lets go is microseconds, which
    /// only `scripts/bench/client` (rss, flat in file size) measures.
    @Test(arguments: TransportUnderTest.allCases)
    func aSentBodyIsNoLongerSharedOnceAnswered(_ kind: TransportUnderTest) async throws {
        let transport = try kind.make()
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        let address = unsafe buffer.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        try await withServer(Self.hashingRouter()) { port in
            for round in 0..<16 {
                let response = try await transport.send(TransportRequest(
                    method: "PUT", url: "http://127.0.0.1:\(port)/upload", body: .bytes(buffer)
                ))
                #expect(response.text == "\(buffer.count) \(checksum(buffer))")
                // Writing into a buffer still shared with anyone copies it first.
                let written = unsafe buffer.withUnsafeMutableBufferPointer { bytes in
                    unsafe bytes[round] = UInt8(truncatingIfNeeded: round + 1)
                    return UInt(bitPattern: bytes.baseAddress)
                }
                #expect(written == address, "round \(round): the sent buffer was still shared, so writing copied it")
            }
        }
    }
}
