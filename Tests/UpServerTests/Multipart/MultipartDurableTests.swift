import Basics
import Foundation
import HTTPKit
import NativeCrypto
import TestSupport
import Testing
import UpCore
@testable import UpServer

/// The v2 flow over the production storage — `SQLiteUpIndex` and `FileBlockStore` — so the handler's
/// expectations of the index (ids, part replacement, completion, abort) hold for both backends.
@Suite("up-server v2 multipart over SQLite and files")
struct MultipartDurableTests {
    @Test func flowOverSQLiteAndFiles() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (server, index, store) = try Self.durableServer(in: directory, port: 9000)
        let token = Self.token()
        let send: @Sendable (HTTPMethod, String, [UInt8]) async -> Response = { method, target, body in
            await server.router.respond(
                to: Request(method: method, target: target, headers: ["Authorization": "UpToken \(token)"], body: body),
                logger: Logger(label: "up-test", sink: LogSink.memory()))
        }
        let key = MultipartPath(bucket: UpServerHarness.bucket, key: "dir/big.bin", resource: .uploads)
        let initiated = await send(.post, key.path, [])
        let id = try #require(initiated.json["uploadId"] as? String)
        var path = key
        let parts = MultipartPayload.split(MultipartPayload.nineMiB, mebibytes: [5, 4])
        var etags: [CompleteMultipartRequest.Part] = []
        path.resource = .part(uploadID: id, partNumber: 2)
        #expect((await send(.put, path.path, [0, 1, 2])).status == 200)
        for part in parts.reversed() {
            path.resource = .part(uploadID: id, partNumber: part.number)
            let response = await send(.put, path.path, part.bytes)
            #expect(response.status == 200)
            etags.insert(.init(etag: response.json["etag"] as? String ?? "", partNumber: part.number), at: 0)
        }
        // Part 2 was replaced: two part blobs are left.
        #expect(try store.list().count == 2)
        path.resource = .upload(id: id)
        let listed = await send(.get, path.path + "?max-parts=1", [])
        #expect(listed.json["partNumberMarker"] as? Int == 1)
        let body = Array(CompleteMultipartRequest(parts: etags).serialized().utf8)
        let completed = await send(.post, path.path, body)
        #expect(completed.status == 200)
        #expect(completed.json["hash"] as? String == "nlj9SMnk_F66LWrtfa-4ZfCxDv1Z")
        #expect(completed.json["key"] as? String == "dir/big.bin")
        #expect((await send(.post, path.path, body)).bodyBytes == completed.bodyBytes)
        #expect((await send(.delete, path.path, [])).status == 612)
        let object = try #require(try await index.object(bucket: UpServerHarness.bucket, key: "dir/big.bin"))
        #expect(object.fsize == 9 << 20 && object.etag == "nlj9SMnk_F66LWrtfa-4ZfCxDv1Z")

        // Abort removes the part files.
        let second = try #require((await send(.post, key.path, [])).json["uploadId"] as? String)
        path.resource = .part(uploadID: second, partNumber: 1)
        #expect((await send(.put, path.path, [1, 2, 3])).status == 200)
        #expect(try store.list().count == 3)
        path.resource = .upload(id: second)
        #expect((await send(.delete, path.path, [])).text == "{}")
        #expect(try store.list().count == 2)
        #expect((await send(.get, path.path, [])).errorText == "no such uploadId")
    }

    @Test func repeatedCompleteAfterARestartReturnsTheFirstAnswer() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let token = Self.token()
        let key = MultipartPath(bucket: UpServerHarness.bucket, key: "restart.bin", resource: .uploads)
        var path = key
        let body: [UInt8]
        let first: Response
        do {
            let (server, _, _) = try Self.durableServer(in: directory, port: 9000)
            let send = Self.sender(server, token: token)
            let id = try #require((await send(.post, key.path, [])).json["uploadId"] as? String)
            path.resource = .part(uploadID: id, partNumber: 1)
            let part = await send(.put, path.path, [1, 2, 3])
            body = Array(
                CompleteMultipartRequest(parts: [.init(etag: part.json["etag"] as? String ?? "", partNumber: 1)])
                    .serialized().utf8)
            path.resource = .upload(id: id)
            first = await send(.post, path.path, body)
            #expect(first.status == 200 && first.json["key"] as? String == "restart.bin")
        }
        // A new process on the same data dir (the client lost the first reply and retries).
        let (restarted, _, _) = try Self.durableServer(in: directory, port: 9000)
        let send = Self.sender(restarted, token: token)
        let repeated = await send(.post, path.path, body)
        #expect(repeated.status == 200 && repeated.bodyBytes == first.bodyBytes)
        #expect((await send(.post, path.path, Array(#"{"parts":[{"partNumber":1,"etag":"Fx"}]}"#.utf8))).status == 612)
    }

    /// Sends one request through `server`'s router with `token`.
    private static func sender(
        _ server: UpServer, token: String
    ) -> @Sendable (HTTPMethod, String, [UInt8]) async -> Response {
        { method, target, body in
            await server.router.respond(
                to: Request(method: method, target: target, headers: ["Authorization": "UpToken \(token)"], body: body),
                logger: Logger(label: "up-test", sink: LogSink.memory()))
        }
    }

    @Test func liveSocketStreamsPartsIntoFiles() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (server, _, store) = try Self.durableServer(in: directory, port: 0)
        let port = try server.start()
        do {
            try await exchange(port: port, store: store)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    /// Init, two parts (one chunked), a refused part and complete over a real connection.
    private func exchange(port: Int, store: FileBlockStore) async throws {
        let auth = ("Authorization", "UpToken \(Self.token())")
        let request: @Sendable (String, String, [(String, String)], [UInt8], Bool) async throws -> TestHTTPResponse = {
            method, target, headers, body, chunked in
            try await BlockingIO.run {
                let client = try TestHTTPClient(port: port)
                defer { client.close() }
                return try client.request(method, target, headers: [auth] + headers, body: body, chunked: chunked)
            }
        }
        var path = MultipartPath(bucket: UpServerHarness.bucket, key: nil, resource: .uploads)
        let initiated = try await request("POST", path.path, [], [], false)
        #expect(initiated.status == 200 && initiated.headers["X-Reqid"] != nil)
        let id = try #require(initiated.json["uploadId"] as? String)
        var references: [CompleteMultipartRequest.Part] = []
        // The 5 MiB part streams with a Content-Length, the 4 MiB one chunked (no length known upfront).
        for (number, bytes) in MultipartPayload.split(MultipartPayload.nineMiB, mebibytes: [5, 4]) {
            path.resource = .part(uploadID: id, partNumber: number)
            let md5 = Hex.encode(MD5.hash(bytes))
            let response = try await request(
                "PUT", path.path, [("Content-Type", "application/octet-stream"), ("Content-MD5", md5)], bytes,
                number == 2)
            #expect(response.status == 200)
            #expect(response.json["md5"] as? String == md5)
            references.append(.init(etag: response.json["etag"] as? String ?? "", partNumber: number))
        }
        path.resource = .part(uploadID: id, partNumber: 3)
        let bad = try await request("PUT", path.path, [("Content-MD5", String(repeating: "0", count: 32))], [1, 2], false)
        #expect(bad.status == 400)
        #expect(try store.list().count == 2)
        path.resource = .upload(id: id)
        let completed = try await request(
            "POST", path.path, [("Content-Type", "application/json")],
            Array(CompleteMultipartRequest(parts: references).serialized().utf8), false)
        #expect(completed.status == 200)
        #expect(completed.headers["Cache-Control"] == "no-store")
        // `~` without saveKey: the key is the hash (§1.3 final key selection).
        #expect(completed.json["hash"] as? String == "nlj9SMnk_F66LWrtfa-4ZfCxDv1Z")
        #expect(completed.json["key"] as? String == "nlj9SMnk_F66LWrtfa-4ZfCxDv1Z")
    }

    /// An up-server over SQLite and files in `directory`, at a pinned clock.
    private static func durableServer(
        in directory: TemporaryDirectory, port: UInt16
    ) throws -> (UpServer, SQLiteUpIndex, FileBlockStore) {
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let configuration = UpServerConfiguration(
            host: "127.0.0.1", port: port, keys: [UpServerHarness.accessKey: UpServerHarness.secretKey],
            buckets: [UpServerHarness.bucket], contextSecret: "test-context-secret-0123456789", threads: 2)
        let index = try SQLiteUpIndex(path: directory.url.appendingPathComponent("index.sqlite").path)
        let store = try FileBlockStore(dataDirectory: directory.url)
        let server = UpServer(
            configuration: configuration, stores: UpStores(blobs: store, index: index, outbox: index.outbox),
            callbacks: ScriptedCallbacks(),
            contextSecret: Array("test-context-secret-0123456789".utf8), clock: ManualClock(1_900_000_000),
            logger: Logger(label: "up-test", sink: LogSink.memory()), metrics: Metrics())
        return (server, index, store)
    }

    /// A bucket-scope token valid at the pinned clock.
    private static func token() -> String {
        UpToken.sign(
            PutPolicy(scope: UpServerHarness.bucket, deadline: 1_900_003_600), accessKey: UpServerHarness.accessKey,
            mac: HMACSHA1(key: Array(UpServerHarness.secretKey.utf8)))
    }
}

extension TestHTTPResponse {
    /// The body as a JSON object (empty when it is not one).
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]) ?? [:] }
}
