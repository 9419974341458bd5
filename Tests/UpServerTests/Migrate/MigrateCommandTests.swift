import Basics
import Foundation
import HTTPKit
import HTTPTransport
import NativeCrypto
import NativePostgres
import ObjectStorage
import ServerShell
import Testing
import TestSupport
import UpCore
@testable import UpServer

/// `up-server migrate`: an embedded installation (SQLite index, blob files) built through the
/// upload routes ends up in PostgreSQL and S3 (SeaweedFS) once, however often the command runs;
/// an up-server on those stores then answers stat exactly as the old one did, downloads the
/// original bytes (hash = the official SDK's `qiniu.etag` of them), delivers the callback still
/// owed, and finishes the v1 and v2 uploads that were in progress.
@Suite("up-server migrate")
struct MigrateCommandTests {
    static let secret = "migrate-context-secret-0123456789"
    static let mac = HMACSHA1(key: Array(UpServerHarness.secretKey.utf8))

    /// An up-server over `stores`, callbacks answered by `callbacks`.
    struct Node {
        let server: UpServer
        let callbacks = ScriptedCallbacks()
        let clock = ManualClock(1_900_000_000)

        init(_ stores: UpStores) {
            let configuration = UpServerConfiguration(
                port: 9000, keys: [UpServerHarness.accessKey: UpServerHarness.secretKey], buckets: ["demo"],
                contextSecret: MigrateCommandTests.secret)
            server = UpServer(
                configuration: configuration, stores: stores, callbacks: callbacks,
                contextSecret: Array(MigrateCommandTests.secret.utf8), clock: clock,
                logger: Logger(label: "up-test", sink: LogSink.memory()), metrics: Metrics())
        }

        func send(_ method: HTTPMethod, _ target: String, headers: HTTPHeaders = [:], body: [UInt8] = []) async -> Response {
            await server.router.respond(
                to: Request(method: method, target: target, headers: headers, body: body),
                logger: Logger(label: "up-test", sink: LogSink.memory()))
        }

        /// A request signed `QBox` (management).
        func managed(_ method: HTTPMethod, _ target: String) async -> Response {
            await send(method, target, headers: ["Authorization": QBoxSignature.sign(
                target: target, body: [], contentType: nil, accessKey: UpServerHarness.accessKey,
                mac: MigrateCommandTests.mac)])
        }

        func token(_ key: String, _ configure: (inout PutPolicy) -> Void = { _ in }) -> String {
            var policy = PutPolicy(scope: "demo:\(key)", deadline: Int64(clock.now()) + 3600)
            configure(&policy)
            return UpToken.sign(policy, accessKey: UpServerHarness.accessKey, mac: MigrateCommandTests.mac)
        }

        func form(_ key: String, _ bytes: [UInt8], fields: [(String, String)] = [], policy: (inout PutPolicy) -> Void = { _ in })
            async -> Response
        {
            let form = FormUploadControllerTests.form(
                token: token(key, policy), fields: [("key", key)] + fields, file: bytes, contentType: "text/plain")
            return await send(.post, "/", headers: form.headers, body: form.body)
        }

        func mkblk(_ key: String, _ bytes: [UInt8]) async -> String {
            let reply = await send(.post, "/mkblk/\(bytes.count)", headers: UpServerHarness.auth(token(key)), body: bytes)
            return reply.json["ctx"] as? String ?? ""
        }

        func mkfile(_ key: String, size: Int, _ contexts: [String]) async -> Response {
            await send(
                .post, V1Paths.mkfile(size, key: key), headers: UpServerHarness.auth(token(key)),
                body: Array(contexts.joined(separator: ",").utf8))
        }

        func startUpload(_ key: String) async -> String {
            let path = MultipartPath(bucket: "demo", key: key, resource: .uploads).path
            return (await send(.post, path, headers: UpServerHarness.auth(token(key)))).json["uploadId"] as? String ?? ""
        }

        func putPart(_ key: String, _ id: String, _ number: Int, _ bytes: [UInt8]) async -> String {
            var headers = UpServerHarness.auth(token(key))
            headers.set(name: "Content-MD5", value: Hex.encode(MD5.hash(bytes)))
            let path = MultipartPath(bucket: "demo", key: key, resource: .part(uploadID: id, partNumber: number)).path
            return (await send(.put, path, headers: headers, body: bytes)).json["etag"] as? String ?? ""
        }

        func complete(_ key: String, _ id: String, _ etags: [String]) async -> Response {
            var headers = UpServerHarness.auth(token(key))
            headers.set(name: "Content-Type", value: "application/json")
            let request = CompleteMultipartRequest(
                parts: etags.enumerated().map { .init(etag: $1, partNumber: $0 + 1) }, fname: nil)
            let path = MultipartPath(bucket: "demo", key: key, resource: .upload(id: id)).path
            return await send(.post, path, headers: headers, body: Array(request.serialized().utf8))
        }
    }

    static func entry(_ key: String) -> String { EncodedEntryURI.encode(bucket: "demo", key: key) }

    /// The embedded installation: objects stored by form (one with deleteAfterDays and
    /// metadata, one whose callback failed: its outbox entry is pending, one whose callback was
    /// delivered: its entry is history), v1 (two blocks), v2
    /// (two parts), a copy sharing the form object's blob, and a v1 block and a v2 upload still
    /// in progress. Returns the objects' bytes by key and the unfinished uploads.
    static func embeddedInstallation(_ directory: URL) async throws
        -> (files: [String: [UInt8]], ctx: String, uploadID: String, partEtag: String)
    {
        let index = try SQLiteUpIndex(dataDirectory: directory)
        let node = Node(UpStores(blobs: try FileBlockStore(dataDirectory: directory), index: index, outbox: index.outbox))
        var files: [String: [UInt8]] = [:]
        files["form.txt"] = Array("hello, migrated world".utf8)
        #expect(await node.form("form.txt", files["form.txt"]!, fields: [("x-qn-meta-color", "red")]) {
            $0.deleteAfterDays = 3
        }.status == 200)
        files["callback.txt"] = Array("a callback still owed".utf8)
        node.callbacks.script(.failed(reason: "biz-server is down"))
        #expect(await node.form("callback.txt", files["callback.txt"]!) {
            $0.callbackUrl = "http://127.0.0.1:9/callback"
            $0.callbackBody = "key=$(key)&hash=$(etag)"
        }.status == 579)
        files["delivered.txt"] = Array("a callback delivered before the move".utf8)
        #expect(await node.form("delivered.txt", files["delivered.txt"]!) {
            $0.callbackUrl = "http://127.0.0.1:9/callback"
            $0.callbackBody = "key=$(key)"
        }.status == 200)
        files["v1.bin"] = V1Data.bytes(V1Data.block + 1000, seed: 3)
        let v1 = files["v1.bin"]!
        let contexts = [await node.mkblk("v1.bin", Array(v1[..<V1Data.block])), await node.mkblk("v1.bin", Array(v1[V1Data.block...]))]
        #expect(await node.mkfile("v1.bin", size: v1.count, contexts).status == 200)
        files["v2.bin"] = V1Data.bytes(V1Data.block + 4321, seed: 4)  // 4 MiB parts: the hash is qiniu.etag's
        let v2 = files["v2.bin"]!
        let id = await node.startUpload("v2.bin")
        let etags = [
            await node.putPart("v2.bin", id, 1, Array(v2[..<V1Data.block])),
            await node.putPart("v2.bin", id, 2, Array(v2[V1Data.block...])),
        ]
        #expect(await node.complete("v2.bin", id, etags).status == 200)
        #expect(await node.managed(.post, "/copy/\(entry("form.txt"))/\(entry("copy.txt"))").status == 200)
        files["copy.txt"] = files["form.txt"]
        // In progress: a block without its mkfile, an upload without its complete.
        let ctx = await node.mkblk("later-v1.bin", V1Data.bytes(1000, seed: 5))
        let later = await node.startUpload("later-v2.bin")
        let partEtag = await node.putPart("later-v2.bin", later, 1, V1Data.bytes(2000, seed: 6))
        #expect(!ctx.isEmpty && !partEtag.isEmpty)
        return (files, ctx, later, partEtag)
    }

    /// A configuration naming a fresh PostgreSQL database and a fresh SeaweedFS bucket.
    static func configurationFile(dataDirectory: URL) async throws -> String {
        let database = try await PostgresCluster.shared().createDatabase("upmigrate")
        let seaweed = try await SeaweedFS.shared()
        let bucket = SeaweedFS.uniqueBucket("migrate")
        let settings = S3Settings(
            endpoint: seaweed.endpoint, region: seaweed.region, bucket: bucket,
            credentials: S3Credentials(accessKeyId: seaweed.accessKeyId, secretAccessKey: seaweed.secretAccessKey))
        try await S3Client(settings: settings, transport: try CurlTransport()).createBucket()
        let json: [String: Any] = [
            "dataDirectory": dataDirectory.path, "buckets": ["demo"], "contextSecret": secret,
            "keys": [["accessKey": UpServerHarness.accessKey, "secretKey": UpServerHarness.secretKey]],
            "database": database,
            "blobStore": [
                "type": "s3", "endpoint": seaweed.endpoint, "region": seaweed.region, "bucket": bucket,
                "accessKeyId": seaweed.accessKeyId, "secretAccessKey": seaweed.secretAccessKey,
            ],
        ]
        let file = dataDirectory.deletingLastPathComponent().appendingPathComponent("up-server.json").path
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: file))
        return file
    }

    @Test func movesEverythingOnceAndAnUpServerOnPostgresAndS3ServesIt() async throws {
        let root = TemporaryDirectory()
        defer { root.remove() }
        let directory = root.url.appendingPathComponent("up")
        let (files, ctx, uploadID, partEtag) = try await Self.embeddedInstallation(directory)
        let old = try SQLiteUpIndex(dataDirectory: directory)
        let oldNode = Node(UpStores(blobs: try FileBlockStore(dataDirectory: directory), index: old, outbox: old.outbox))
        var stats: [String: String] = [:]
        for key in files.keys { stats[key] = await oldNode.managed(.get, "/stat/" + Self.entry(key)).text }
        let file = try await Self.configurationFile(dataDirectory: directory)

        let first = await MigrateCommand.run(["--config", file], environment: [:])
        #expect(first.status == 0, "\(first.error)")
        #expect(first.output.hasPrefix(
            "migrated 9 of 9 blobs, 6 of 6 objects, 2 of 2 completion records, 2 of 2 callbacks, "
                + "3 of 3 v1 blocks, 2 of 2 v2 uploads with 1 of 1 parts (the rest were there already); "
                + "every instance needs this configuration's contextSecret"), "\(first.output)")
        let again = await MigrateCommand.run(["--config", file, "--data-dir", directory.path], environment: [:])
        #expect(again.status == 0, "\(again.error)")
        #expect(again.output.hasPrefix(
            "migrated 0 of 9 blobs, 0 of 6 objects, 0 of 2 completion records, 0 of 2 callbacks, "
                + "0 of 3 v1 blocks, 0 of 2 v2 uploads with 0 of 1 parts"), "\(again.output)")
        #expect(again.output.filter { $0 == "\n" }.count == 1)

        // A new instance: nothing of the old data directory, only the configured stores.
        let configuration = try UpServerConfiguration.load(path: file, environment: [:])
        let stores = try UpServer.openStores(
            configuration: configuration, directory: root.url.appendingPathComponent("new"),
            logger: Logger(label: "up-test", sink: LogSink.memory()))
        try await stores.prepare()
        #expect(stores.blobs is S3BlockStore && stores.objects is PostgresUpIndex)
        // Counted by SQL and by listing the bucket, not by the command: the second run added nothing.
        let pool = try #require(stores.objects as? PostgresUpIndex).pool
        let counts = try await pool.withConnection { connection in
            try ["objects", "segments", "completions", "callback_outbox", "blocks", "uploads", "parts"].map {
                try connection.query("SELECT count(*) FROM \($0)").first?.decode(0, as: Int64.self) ?? -1
            }
        }
        #expect(counts == [6, 8, 2, 2, 3, 2, 1])
        #expect(try await BlockingIO.run { try stores.blobs.list().count } == 9)
        #expect(stats["form.txt"]?.contains(#""expiration":"#) == true && stats["form.txt"]?.contains("x-qn-meta") == true)
        let node = Node(stores)
        for key in files.keys.sorted() {
            #expect(await node.managed(.get, "/stat/" + Self.entry(key)).text == stats[key], "\(key)")
            let download = await node.managed(.get, "/download/" + Self.entry(key))
            #expect(download.status == 200, "\(key)")
            #expect(try await Self.body(download) == files[key], "\(key)")
            let hash = try #require(try JSONSerialization.jsonObject(with: Data(stats[key]!.utf8)) as? [String: Any])["hash"]
            #expect(download.headers["ETag"] == "\"\(hash as? String ?? "")\"")
            #expect(try await Self.sdkEtag(files[key]!, root) == hash as? String, "\(key)")
        }
        // The outbox moved whole: the delivered entry as history (its reply kept), the owed one due.
        let outbox = try await pool.withConnection { connection in
            try connection.query("SELECT state, attempts, reply FROM callback_outbox ORDER BY id").rows.map {
                [try $0.decode(0, as: String.self), String(try $0.decode(1, as: Int64.self)), try $0.decode(2, as: String?.self) ?? "-"]
            }
        }
        #expect(outbox == [["pending", "0", "-"], ["delivered", "1", #"{"ok":true}"#]])
        // The callback still owed is delivered by the new instance's retrier; the delivered one is not sent again.
        #expect(await node.server.retrier.runOnce() == 1)
        let callbackHash = try await Self.sdkEtag(files["callback.txt"]!, root)
        #expect(node.callbacks.sent.map(\.body) == ["key=callback.txt&hash=\(callbackHash)"])
        // Uploads in progress finish there (the ctx is signed with the shared contextSecret).
        #expect(await node.mkfile("later-v1.bin", size: 1000, [ctx]).status == 200)
        #expect(try await node.managed(.get, "/download/" + Self.entry("later-v1.bin")).contents() == V1Data.bytes(1000, seed: 5))
        #expect(await node.complete("later-v2.bin", uploadID, [partEtag]).status == 200)
        #expect(try await node.managed(.get, "/download/" + Self.entry("later-v2.bin")).contents() == V1Data.bytes(2000, seed: 6))
    }

    @Test func refusesWithOneLineWithoutADatabaseOrAnS3Store() async throws {
        let root = TemporaryDirectory()
        defer { root.remove() }
        try FileManager.default.createDirectory(at: root.url, withIntermediateDirectories: true)
        let file = root.url.appendingPathComponent("up-server.json").path
        for (json, message) in [
            (#"{"keys": [{"accessKey": "ak", "secretKey": "sk"}], "buckets": ["demo"]}"#,
             "up-server migrate: no database configured"),
            (#"{"keys": [{"accessKey": "ak", "secretKey": "sk"}], "buckets": ["demo"], "database": "postgresql://upgate@127.0.0.1:1/upgate"}"#,
             "up-server migrate: no S3 blob store configured"),
        ] {
            try Data(json.utf8).write(to: URL(fileURLWithPath: file))
            let outcome = await MigrateCommand.run(["--config", file], environment: [:])
            #expect(outcome.status == 78)
            #expect(outcome.output.isEmpty)
            #expect(outcome.error.hasPrefix(message), "\(outcome.error)")
            #expect(outcome.error.filter { $0 == "\n" }.count == 1)
        }
    }

    /// A response's body, in memory or (a download from S3 spools) a file range.
    static func body(_ response: Response) async throws -> [UInt8] { try await response.contents() }

    /// The official Python SDK's `qiniu.etag` of `bytes`.
    static func sdkEtag(_ bytes: [UInt8], _ root: TemporaryDirectory) async throws -> String {
        let path = root.url.appendingPathComponent("etag-\(UUID().uuidString)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let run = try await PythonSDK.run(["-c", "import sys, qiniu; print(qiniu.etag(sys.argv[1]))", path])
        #expect(run.status == 0, "\(run.output)")
        return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

extension Response {
    /// The body: read from its file when it is one (the descriptor is closed), pulled from its
    /// source when it streams (an S3 download of more than a MiB).
    func contents() async throws -> [UInt8] {
        switch body {
        case .bytes(let bytes): return bytes
        case .file(let descriptor, let offset, let length):
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            try handle.seek(toOffset: offset)
            return Array(try handle.read(upToCount: Int(length)) ?? Data())
        case .stream(let length, let source):
            var bytes: [UInt8] = []
            while let piece = try await source.next() { bytes += piece }
            #expect(bytes.count == Int(length))
            return bytes
        }
    }
}
