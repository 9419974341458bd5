import Basics
import BizServer
import Foundation
import HTTPTransport
import NativeCrypto
import Synchronization
import Testing
import UpClient
import UpCore
import UpServer

/// UpClient against an in-process up-server and biz-server on loopback: every upload ends with
/// the local etag as the object hash and exactly one callback record at biz-server.
@Suite("ClientEndToEnd", .serialized)
struct ClientEndToEndTests {
    /// Both servers in a temp directory; stopped by ``stop()``.
    final class Chain: Sendable {
        let directory: URL
        let up: UpServer
        let biz: BizServer
        let upURL: String
        let bizURL: String

        init(tokenLifetime: Int64 = 3600) async throws {
            directory = FileManager.default.temporaryDirectory.appending(path: "client-e2e-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let logs = LogSink.memory()
            up = try UpServer.open(
                configuration: UpServerConfiguration(
                    port: 0, dataDirectory: directory.appending(path: "up").path,
                    keys: ["dev-access-key": "dev-secret-key"], buckets: ["demo"], threads: 2),
                logger: Logger(label: "up-server", sink: logs))
            let upPort = try up.start()
            upURL = "http://127.0.0.1:\(upPort)"
            let bizDirectory = directory.appending(path: "biz")
            try FileManager.default.createDirectory(at: bizDirectory, withIntermediateDirectories: true)
            biz = BizServer(
                configuration: BizServerConfiguration(
                    port: 0, dataDirectory: bizDirectory.path, accessKey: "dev-access-key", secretKey: "dev-secret-key",
                    upHosts: [upURL],
                    clients: [.init(id: "demo", apiKeySHA256: BizServerConfiguration.apiKeyHash("dev-api-key"),
                                    bucket: "demo", keyPrefix: "demo/", tokenLifetimeSeconds: tokenLifetime)],
                    rateLimit: .init(tokensPerSecond: 100, burst: 100),
                    threads: 2),
                store: try SQLiteUploadRecordStore(path: bizDirectory.appending(path: "uploads.sqlite3").path, durableWrites: false),
                logger: Logger(label: "biz-server", sink: logs))
            bizURL = "http://127.0.0.1:\(try biz.start())"
        }

        func stop() async {
            await up.shutdown()
            await biz.shutdown()
            try? FileManager.default.removeItem(at: directory)
        }

        /// A file of `size` deterministic bytes.
        func file(_ name: String, size: Int) throws -> String {
            let path = directory.appending(path: name).path
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: ($0 &* 31) &+ ($0 >> 12)) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return path
        }

        var token: TokenSource { .bizServer(url: bizURL, apiKey: "dev-api-key") }

        /// biz-server's records for `key`.
        func records(key: String) async throws -> [JSONValue] {
            let transport = try CurlTransport()
            let response = try await transport.send(TransportRequest(
                method: "GET", url: bizURL + "/v1/uploads?limit=100", headers: [("Authorization", "Bearer dev-api-key")]))
            guard case .array(let items) = try JSONValue.parse(response.body)["items"] else { return [] }
            return items.filter { $0["key"]?.stringValue == key }
        }
    }

    /// Counts body bytes and requests; optionally delays each request.
    final class CountingTransport: HTTPTransport {
        let inner: any HTTPTransport
        let delay: Duration
        let stats = Mutex((bytes: Int64(0), tokenRequests: 0, requests: 0, failures: [String]()))
        init(_ inner: any HTTPTransport, delay: Duration = .zero) {
            self.inner = inner
            self.delay = delay
        }
        func send(_ request: TransportRequest) async throws -> TransportResponse {
            stats.withLock {
                $0.requests += 1
                if request.url.hasSuffix("/v1/uptoken") { $0.tokenRequests += 1 } else { $0.bytes += request.body.count }
            }
            if delay > .zero { try await Task.sleep(for: delay) }
            let response = try await inner.send(request)
            if response.status != 200 { stats.withLock { $0.failures.append("\(response.status) \(request.url.split(separator: "/").dropFirst(2).first ?? "") \(response.text)") } }
            return response
        }
    }

    static func client(_ chain: Chain, _ choice: UploadProtocol, chunk: Int = 4 << 20, part: Int = 4 << 20,
                       transport: any HTTPTransport) -> UploadClient {
        var configuration = UploadClient.Configuration(upHosts: [chain.upURL])
        configuration.protocolChoice = choice
        configuration.chunkSize = chunk
        configuration.partSize = part
        configuration.retryBaseDelay = .milliseconds(10)
        return UploadClient(configuration: configuration, transport: transport)
    }

    static let cases: [(name: String, size: Int, choice: UploadProtocol, chunk: Int, part: Int)] = [
        ("small-form", 5, .automatic, 4 << 20, 4 << 20),
        ("empty-form", 0, .automatic, 4 << 20, 4 << 20),
        ("exactly-4MiB", 4 << 20, .automatic, 4 << 20, 4 << 20),
        ("4MiB-plus-1", (4 << 20) + 1, .automatic, 4 << 20, 4 << 20),
        ("odd-chunks-v1", 13 << 20 | 12_345, .v1, 1_572_864, 4 << 20),
        ("tiny-chunks-v1", (4 << 20) + 5000, .v1, 1024 + 7 + 300_000, 4 << 20),
        ("v2-4MiB-parts", 9 << 20 | 77, .v2, 4 << 20, 4 << 20),
        ("v2-odd-parts", 9 << 20 | 77, .v2, 4 << 20, 3 << 20),
        // Parts above 4 MiB are hashed in one pass, then streamed from the file.
        ("v2-big-parts", 13 << 20 | 5, .v2, 4 << 20, 6 << 20),
    ]

    @Test(arguments: cases.indices)
    func uploadsWithTheRightEtagAndOneRecord(_ index: Int) async throws {
        let c = Self.cases[index]
        let chain = try await Chain()
        do {
            let path = try chain.file(c.name, size: c.size)
            let key = "demo/\(c.name)"
            let client = Self.client(chain, c.choice, chunk: c.chunk, part: c.part, transport: try CurlTransport())
            let seen = Mutex<[Int64]>([])
            let result = try await client.upload(
                UploadRequest(filePath: path, key: key, token: chain.token)) { progress in
                    seen.withLock { $0.append(progress.bytesSent) }
                }
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let bytes = [UInt8](data)
            // v2 with parts other than 4 MiB hashes by part (spec §7.2); everything else is the v1 etag.
            let expected = c.choice == .v2 && c.part != 4 << 20
                ? Etag.v2(parts: stride(from: 0, to: bytes.count, by: c.part).map { start in
                    let part = bytes[start..<min(start + c.part, bytes.count)]
                    // §7.2: SHA-1 of a part of one block, else SHA-1 of its 4 MiB blocks' SHA-1s.
                    let blocks = stride(from: part.startIndex, to: part.endIndex, by: 4 << 20).map { block in
                        SHA1.hash(part[block..<min(block + (4 << 20), part.endIndex)])
                    }
                    return Etag.Part(digest: blocks.count == 1 ? blocks[0] : SHA1.hash(blocks.flatMap { $0 }), size: Int64(part.count))
                })
                : Etag.of(bytes)
            #expect(result.hash == expected)
            #expect(result.key == key)
            #expect(result.size == Int64(c.size))
            #expect(try JSONValue.parse(result.reply)["hash"]?.stringValue == result.hash)
            let records = try await chain.records(key: key)
            #expect(records.count == 1)
            #expect(records.first?["hash"]?.stringValue == result.hash)
            let reports = seen.withLock { $0 }
            #expect(reports == reports.sorted(), "progress went backwards")
            #expect(reports.last == Int64(c.size) || c.size == 0)
        } catch {
            await chain.stop()
            throw error
        }
        await chain.stop()
    }

    @Test(arguments: [UploadProtocol.v1, .v2])
    func pauseThenResumeFromTheCheckpoint(_ choice: UploadProtocol) async throws {
        let chain = try await Chain()
        do {
            let size = 20 << 20
            let path = try chain.file("pause.bin", size: size)
            let checkpoint = chain.directory.appending(path: "pause.ckpt").path
            let counting = CountingTransport(try CurlTransport(), delay: .milliseconds(20))
            let chunk = 512 << 10
            let client = Self.client(chain, choice, chunk: chunk, part: 1 << 20, transport: counting)
            let request = UploadRequest(filePath: path, key: "demo/pause-\(choice)", token: chain.token, checkpointPath: checkpoint)
            let control = UploadControl()
            let paused = Mutex(false)
            let first = await Result { () async throws(UploadError) -> UploadResult in
                try await client.upload(request, control: control) { progress in
                    if progress.bytesSent >= Int64(size / 2), !paused.withLock({ $0 }) {
                        paused.withLock { $0 = true }
                        control.pause()
                    }
                }
            }
            guard case .failure(let error) = first else { Issue.record("not paused"); await chain.stop(); return }
            #expect(error.kind == .paused)
            #expect(FileManager.default.fileExists(atPath: checkpoint))
            let firstRun = counting.stats.withLock { $0.bytes }
            let result = try await client.upload(request, control: control)
            #expect(result.resumed)
            if choice == .v1 { #expect(result.hash == Etag.of([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))) }
            #expect(!FileManager.default.fileExists(atPath: checkpoint))
            // up-server answers 701 to a bput on a ctx whose next chunk was cut off mid-body by the
            // pause; the client then redoes that block (§4.2), so each such 701 may cost one block.
            let redone = Int64(counting.stats.withLock { $0.failures.count { $0.hasPrefix("701") } })
            let sent = counting.stats.withLock { $0.bytes }
            let unit = Int64(choice == .v1 ? chunk : 1 << 20)
            #expect(firstRun < Int64(size))
            #expect(sent <= Int64(size) + 4 * unit + redone * (4 << 20) + 65_536, "re-sent \(sent - Int64(size)) bytes")
            #expect(try await chain.records(key: "demo/pause-\(choice)").count == 1)
        } catch {
            await chain.stop()
            throw error
        }
        await chain.stop()
    }

    @Test func abortDeletesTheCheckpointAndTheV2Upload() async throws {
        let chain = try await Chain()
        do {
            let path = try chain.file("abort.bin", size: 12 << 20)
            let checkpoint = chain.directory.appending(path: "abort.ckpt").path
            let client = Self.client(chain, .v2, part: 1 << 20, transport: CountingTransport(try CurlTransport(), delay: .milliseconds(20)))
            let control = UploadControl()
            let request = UploadRequest(filePath: path, key: "demo/abort", token: chain.token, checkpointPath: checkpoint)
            let outcome = await Result { () async throws(UploadError) -> UploadResult in
                try await client.upload(request, control: control) { progress in
                    if progress.bytesSent >= 3 << 20 { control.abort() }
                }
            }
            guard case .failure(let error) = outcome else { Issue.record("not aborted"); await chain.stop(); return }
            #expect(error.kind == .aborted)
            #expect(!FileManager.default.fileExists(atPath: checkpoint))
            #expect(try await chain.records(key: "demo/abort").isEmpty)
        } catch {
            await chain.stop()
            throw error
        }
        await chain.stop()
    }

    @Test func aShortLivedTokenIsRefreshedMidUpload() async throws {
        let chain = try await Chain(tokenLifetime: 2)
        do {
            let path = try chain.file("refresh.bin", size: 8 << 20)
            let counting = CountingTransport(try CurlTransport(), delay: .milliseconds(150))
            var configuration = UploadClient.Configuration(upHosts: [chain.upURL])
            configuration.protocolChoice = .v1
            configuration.chunkSize = 256 << 10
            configuration.concurrency = 2
            let client = UploadClient(configuration: configuration, transport: counting)
            let result = try await client.upload(UploadRequest(filePath: path, key: "demo/refresh", token: chain.token))
            #expect(result.hash == Etag.of([UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))))
            #expect(counting.stats.withLock { $0.tokenRequests } >= 2)
            #expect(try await chain.records(key: "demo/refresh").count == 1)
        } catch {
            await chain.stop()
            throw error
        }
        await chain.stop()
    }
}

extension Result where Failure == UploadError {
    /// Captures the outcome of an async call with typed throws.
    init(_ body: () async throws(UploadError) -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
