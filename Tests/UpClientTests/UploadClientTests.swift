import Foundation
import HTTPTransport
import NativeCrypto
import Synchronization
import Testing
import UpCore
@testable import UpClient

/// The executor against a fake up host in memory: every request is answered by a closure that
/// can inject faults, and recorded.
@Suite struct UploadClientTests {
    /// A v1 up host in memory: it keeps each block's bytes under the ctx it handed out, answers
    /// a chunk with the CRC-32 of the bytes it received, and mkfile with the etag of the bytes the
    /// ctx list names (what a real up host would store). `fault` can answer instead.
    final class FakeUpHost: HTTPTransport {
        /// Return a response to inject a fault for the n-th request (0-based), or nil for normal service.
        let fault: @Sendable (TransportRequest, Int) -> TransportResponse?
        let log = Mutex<[(String, Int)]>([])
        private let blocks = Mutex<[String: [UInt8]]>([:])
        init(fault: @escaping @Sendable (TransportRequest, Int) -> TransportResponse? = { _, _ in nil }) {
            self.fault = fault
        }
        var requests: [(url: String, status: Int)] { log.withLock { $0.map { (url: $0.0, status: $0.1) } } }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            let n = log.withLock { $0.count }
            let response = fault(request, n) ?? serve(request)
            log.withLock { $0.append((request.url, response.status)) }
            return response
        }

        private func serve(_ request: TransportRequest) -> TransportResponse {
            let path = String(request.url.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" })
            let body: [UInt8]
            switch request.body {
            case .none: body = []
            case .bytes(let bytes): body = bytes
            case .file(let file, let offset, let length):
                let data = (try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()
                body = [UInt8](data.dropFirst(Int(offset)).prefix(Int(length)))
            }
            if path.hasPrefix("/mkfile/") {
                let contexts = String(decoding: body, as: UTF8.self).split(separator: ",").map(String.init)
                let stored = blocks.withLock { blocks in contexts.map { blocks[$0] } }
                guard stored.allSatisfy({ $0 != nil }) else { return json("{\"error\":\"unknown ctx\"}", status: 701) }
                return json("{\"hash\":\"\(Etag.of(stored.flatMap { $0! }))\",\"key\":\"k\"}")
            }
            let segments = path.split(separator: "/")
            return blocks.withLock { blocks in
                var block: [UInt8] = []
                if segments.first == "bput" {
                    guard segments.count == 3, let previous = blocks[String(segments[1])] else {
                        return json("{\"error\":\"unknown ctx\"}", status: 701)
                    }
                    block = previous
                }
                block += body
                let context = "ctx\(blocks.count)"
                blocks[context] = block
                return json("{\"ctx\":\"\(context)\",\"crc32\":\(CRC32.checksum(body)),\"offset\":\(block.count),\"expired_at\":4000000000}")
            }
        }
    }

    static func json(_ text: String, status: Int = 200, headers: [(String, String)] = []) -> TransportResponse {
        TransportResponse(status: status, headers: [("X-Reqid", "r1")] + headers, body: Array(text.utf8))
    }

    static let token = TokenSource.fixed("ak:sig:" + URLSafeBase64.encode(Array("{\"scope\":\"demo:k\",\"deadline\":4000000000}".utf8)))

    /// A file of `size` bytes, its modification time set an hour back (so any later write moves
    /// it, whatever the file system's timestamp granularity).
    static func fixture(size: Int) throws -> (path: String, bytes: [UInt8]) {
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ ($0 >> 10)) }
        let path = FileManager.default.temporaryDirectory.appending(path: "upclient-\(UUID().uuidString)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: path)
        return (path, bytes)
    }

    static func client(_ transport: any HTTPTransport, hosts: [String] = ["http://a"]) -> UploadClient {
        var configuration = UploadClient.Configuration(upHosts: hosts)
        configuration.protocolChoice = .v1
        configuration.chunkSize = 1 << 20
        configuration.concurrency = 1
        configuration.retryBaseDelay = .milliseconds(1)
        return UploadClient(configuration: configuration, transport: transport)
    }

    @Test func aCRCMismatchResendsTheChunk() async throws {
        let (path, bytes) = try Self.fixture(size: 3 << 20)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let host = FakeUpHost { _, n in n == 1 ? Self.json("{\"ctx\":\"bad\",\"crc32\":1,\"offset\":2097152}") : nil }
        let result = try await Self.client(host).upload(UploadRequest(filePath: path, key: "k", token: Self.token))
        #expect(result.hash == Etag.of(bytes))
        let urls = host.requests.map(\.url)
        #expect(urls.count == 5)  // mkblk, bput (bad crc), bput again, bput, mkfile
        #expect(urls[1] == urls[2])
    }

    @Test func a701RedoesTheBlock() async throws {
        let (path, bytes) = try Self.fixture(size: 2 << 20)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let host = FakeUpHost { _, n in n == 1 ? Self.json("{\"error\":\"invalid ctx\"}", status: 701) : nil }
        let result = try await Self.client(host).upload(UploadRequest(filePath: path, key: "k", token: Self.token))
        #expect(result.hash == Etag.of(bytes))
        let paths = host.requests.map { $0.url.split(separator: "/")[2] }
        #expect(paths == ["mkblk", "bput", "mkblk", "bput", "mkfile"])
    }

    @Test func a5xxFailsOverToTheNextHost() async throws {
        let (path, bytes) = try Self.fixture(size: 1 << 20)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let host = FakeUpHost { request, _ in
            request.url.hasPrefix("http://a/") ? Self.json("{\"error\":\"down\"}", status: 503) : nil
        }
        let result = try await Self.client(host, hosts: ["http://a", "http://b"])
            .upload(UploadRequest(filePath: path, key: "k", token: Self.token))
        #expect(result.hash == Etag.of(bytes))
        #expect(host.requests.map(\.url).filter { $0.hasPrefix("http://a/") }.count == 1)
    }

    @Test func retryAfterIsHonoured() async throws {
        let (path, _) = try Self.fixture(size: 1 << 10)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let host = FakeUpHost { _, n in
            n == 0 ? Self.json("{\"error\":\"slow down\"}", status: 429, headers: [("Retry-After", "1")]) : nil
        }
        let start = ContinuousClock.now
        _ = try await Self.client(host).upload(UploadRequest(filePath: path, key: "k", token: Self.token))
        #expect(ContinuousClock.now - start >= .seconds(1))
    }

    @Test func aFinalErrorCarriesStatusTextAndRequestID() async throws {
        let (path, _) = try Self.fixture(size: 1 << 10)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let host = FakeUpHost { _, _ in Self.json("{\"error\":\"file exists\"}", status: 614) }
        do {
            _ = try await Self.client(host).upload(UploadRequest(filePath: path, key: "k", token: Self.token))
            Issue.record("no error")
        } catch {
            #expect(error.kind == .server(status: 614))
            #expect(error.message.contains("file exists"))
            #expect(error.requestID == "r1")
        }
        #expect(host.requests.count == 1)
    }
}
