import Basics
import Foundation
import HTTPKit
import NativeStore
import Testing
import TestSupport
@testable import UpServer

/// The official Qiniu Python SDK (`qiniu==7.18.0`) manages objects on a live up-server over its
/// production stores (SQLite index, blob files): `BucketManager` with
/// `Region(rs_host=…, rsf_host=…)` runs stat, list (prefix, delimiter, limit, marker), copy with
/// and without force, move, change_mime, chgm with metadata and deleteAfterDays in a batch, delete,
/// a partly failing batch; `Auth.private_download_url` downloads (whole, Range, HEAD, expired,
/// forged). Then the lifecycle sweep runs, and the blob directory itself is the oracle: it
/// holds exactly the blobs of the objects that are left.
@Suite("management with the official Python SDK")
struct ManagementSDKTests {
    static let script = #"""
        import io, json, sys, time, urllib.parse
        import requests
        from qiniu import Auth, put_data, BucketManager, Region, build_batch_stat, build_batch_delete
        from qiniu import urlsafe_base64_encode, entry
        from qiniu.utils import etag_stream
        base, ak, sk = sys.argv[1:4]
        q = Auth(ak, sk)
        up = [Region(up_host=base)]
        out = {}
        def put(key, data, **kw):
            ret, info = put_data(q.upload_token('demo', key, 3600), key, data, regions=up, **kw)
            assert info.status_code == 200, info
        put('dir/a.txt', b'hello world', mime_type='text/plain', metadata={'x-qn-meta-color': 'red'})
        put('dir/sub/b.txt', b'bbb')
        put('dir/sub/c.txt', b'ccc')
        put('dir/\u4e03\u725b d.txt', bytes(range(256)) * 40)
        put('e.txt', b'eee')
        m = BucketManager(q, regions=[Region(rs_host=base, rsf_host=base)])
        ret, info = m.stat('demo', 'dir/a.txt')
        out['stat'] = [info.status_code, ret]
        out['etag'] = etag_stream(io.BytesIO(b'hello world'))
        ret, info = m.stat('demo', 'nope')
        out['statMissing'] = [info.status_code, info.error]
        ret, eof, info = m.list('demo', prefix='dir/', delimiter='/')
        out['listDelimited'] = [info.status_code, ret, eof]
        keys, marker, pages = [], None, 0
        while True:
            ret, eof, info = m.list('demo', marker=marker, limit=2)
            assert info.status_code == 200, info
            keys += [item['key'] for item in ret['items']]
            pages += 1
            marker = ret.get('marker')
            if eof: break
        out['listPaged'] = [keys, pages]
        ret, info = m.copy('demo', 'dir/a.txt', 'demo', 'e.txt')
        out['copyTaken'] = [info.status_code, info.error]
        ret, info = m.copy('demo', 'dir/a.txt', 'demo', 'e.txt', force='true')
        out['copyForced'] = info.status_code
        ret, info = m.copy('demo', 'dir/a.txt', 'other', 'a-copy.txt')
        out['copy'] = info.status_code
        ret, info = m.move('demo', 'dir/sub/b.txt', 'demo', 'moved/b.txt')
        out['move'] = info.status_code
        ret, info = m.move('demo', 'dir/sub/b.txt', 'demo', 'moved/b2.txt')
        out['moveMissing'] = [info.status_code, info.error]
        ret, info = m.change_mime('demo', 'e.txt', 'application/x-test')
        out['chgm'] = info.status_code
        meta = 'chgm/%s/x-qn-meta-size/%s' % (entry('demo', 'e.txt'), urlsafe_base64_encode('large'))
        ret, info = m.batch([meta, 'deleteAfterDays/%s/1' % entry('demo', 'dir/sub/c.txt')])
        out['batchChange'] = [info.status_code, ret]
        ret, info = m.delete_after_days('demo', 'other:bucket-has-no-key-here', 2)
        out['deleteAfterDaysMissing'] = info.status_code
        ret, info = m.delete_after_days('demo', 'e.txt', 3)
        out['deleteAfterDays'] = info.status_code
        ret, info = m.stat('demo', 'e.txt')
        out['statChanged'] = ret
        ret, info = m.delete('demo', 'moved/b.txt')
        out['delete'] = info.status_code
        ret, info = m.delete('demo', 'moved/b.txt')
        out['deleteAgain'] = [info.status_code, info.error]
        ops = build_batch_stat('demo', ['dir/a.txt', 'ghost']) + build_batch_delete('other', ['a-copy.txt'])
        ret, info = m.batch(ops)
        out['batchMixed'] = [info.status_code, json.loads(info.text_body)]
        url = base + '/dl/demo/' + urllib.parse.quote('dir/\u4e03\u725b d.txt')
        signed = q.private_download_url(url, expires=3600)
        whole = requests.get(signed)
        part = requests.get(signed, headers={'Range': 'bytes=250-260'})
        tail = requests.get(signed, headers={'Range': 'bytes=-5'})
        past = requests.get(signed, headers={'Range': 'bytes=999999-'})
        head = requests.head(signed)
        out['download'] = [whole.status_code, list(whole.content) == list(bytes(range(256)) * 40),
                           part.status_code, part.headers.get('Content-Range'), list(part.content),
                           tail.status_code, list(tail.content), past.status_code, past.headers.get('Content-Range'),
                           head.status_code, head.headers.get('Content-Length'), len(head.content)]
        expired = Auth(ak, sk).private_download_url(url, expires=-10)
        forged = Auth(ak, 'wrong-secret').private_download_url(url, expires=3600)
        out['refused'] = [requests.get(url).status_code, requests.get(expired).status_code,
                          requests.get(expired).json(), requests.get(forged).status_code]
        print(json.dumps(out))
        """#

    @Test func theSDKManagesObjectsAndTheLifecycleSweepLeavesNoOrphan() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let clock = ManualClock(Double(Int64(Date().timeIntervalSince1970)))
        let server = try Self.server(directory: directory, clock: clock)
        let port = try server.start()
        let base = "http://127.0.0.1:\(port)"
        let run = try await PythonSDK.run(["-c", Self.script, base, UpServerHarness.accessKey, UpServerHarness.secretKey])
        await server.shutdown()
        let last = run.output.split(separator: "\n").last.map(String.init) ?? ""
        let json = try #require((try? JSONSerialization.jsonObject(with: Data(last.utf8))) as? [String: Any], "\(run.output)")

        let stat = try #require(json["stat"] as? [Any])
        #expect(stat.first as? Int == 200)
        let attributes = try #require(stat.last as? [String: Any])
        #expect(attributes["fsize"] as? Int == 11 && attributes["mimeType"] as? String == "text/plain")
        #expect(attributes["hash"] as? String == json["etag"] as? String)  // the SDK's etag of the bytes
        #expect((attributes["x-qn-meta"] as? [String: String]) == ["x-qn-meta-color": "red"])
        #expect(text(json["statMissing"]) == #"[612,"{\"error\":\"no such file or directory\"}"]"#)

        let delimited = try #require(json["listDelimited"] as? [Any])
        let page = try #require(delimited[1] as? [String: Any])
        #expect((page["items"] as? [[String: Any]])?.map { $0["key"] as? String } == ["dir/a.txt", "dir/七牛 d.txt"])
        #expect(page["commonPrefixes"] as? [String] == ["dir/sub/"])
        #expect(delimited.last as? Bool == true)
        let paged = try #require(json["listPaged"] as? [Any])
        #expect(paged.first as? [String] == ["dir/a.txt", "dir/sub/b.txt", "dir/sub/c.txt", "dir/七牛 d.txt", "e.txt"])
        #expect(paged.last as? Int == 3)

        #expect(text(json["copyTaken"]) == #"[614,"{\"error\":\"file exists\"}"]"#)
        #expect(json["copyForced"] as? Int == 200 && json["copy"] as? Int == 200 && json["move"] as? Int == 200)
        #expect(text(json["moveMissing"]) == #"[612,"{\"error\":\"no such file or directory\"}"]"#)
        #expect(json["chgm"] as? Int == 200)
        #expect(text(json["batchChange"]) == #"[200,[{"code":200},{"code":200}]]"#)
        #expect(json["deleteAfterDaysMissing"] as? Int == 612 && json["deleteAfterDays"] as? Int == 200)
        let changed = try #require(json["statChanged"] as? [String: Any])
        #expect(changed["mimeType"] as? String == "application/x-test")
        #expect(changed["x-qn-meta"] as? [String: String] == ["x-qn-meta-color": "red", "x-qn-meta-size": "large"])
        #expect(changed["expiration"] as? Int == (changed["putTime"] as? Int ?? 0) / 10_000_000 + 3 * 86_400)
        #expect(json["delete"] as? Int == 200)
        #expect(text(json["deleteAgain"]) == #"[612,"{\"error\":\"no such file or directory\"}"]"#)
        let mixed = try #require(json["batchMixed"] as? [Any])
        #expect(mixed.first as? Int == 298)
        let results = try #require(mixed.last as? [[String: Any]])
        #expect(results.map { $0["code"] as? Int } == [200, 612, 200])
        #expect((results[0]["data"] as? [String: Any])?["fsize"] as? Int == 11)
        #expect((results[1]["data"] as? [String: String]) == ["error": "no such file or directory"])

        #expect(text(json["download"]) == "[200,true,206,\"bytes 250-260/10240\",[250,251,252,253,254,255,0,1,2,3,4],"
            + "206,[251,252,253,254,255],416,\"bytes */10240\",200,\"10240\",0]")
        #expect(text(json["refused"]) == #"[401,401,{"error":"expired token"},401]"#)

        // What is left: dir/a.txt, dir/七牛 d.txt, e.txt (a copy of dir/a.txt's blob, 3 days),
        // dir/sub/c.txt (1 day). One day later the sweep takes c.txt; four days later e.txt,
        // whose blob dir/a.txt still names.
        let index = try SQLiteUpIndex(dataDirectory: directory.url)
        let store = try FileBlockStore(dataDirectory: directory.url)
        let sweeper = Sweeper(index: index, store: store)
        #expect(Set(try store.list()) == (try await index.knownBlobs()))
        let now = Int64(clock.now())
        #expect(try await sweeper.sweepExpiredObjects(now: now + 86_400).names.map(\.key) == ["dir/sub/c.txt"])
        let blobOfA = try #require(try await index.object(bucket: "demo", key: "dir/a.txt")?.segments.first?.blob)
        let expired = try await sweeper.sweepExpiredObjects(now: now + 4 * 86_400)
        #expect(expired.names.map(\.key) == ["e.txt"] && expired.blobs.isEmpty)
        #expect(try store.list().contains(blobOfA))
        #expect(Set(try Self.blobFiles(directory)) == (try await index.knownBlobs()))
        for key in ["dir/a.txt", "dir/七牛 d.txt"] {
            let released = try #require(try await index.deleteObject(bucket: "demo", key: key))
            for blob in released { try store.remove(blob) }
        }
        #expect(try Self.blobFiles(directory).isEmpty)
    }

    /// `value` as compact JSON with sorted keys, to compare with a literal.
    func text(_ value: Any?) -> String {
        guard let value, let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return "nil"
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The blobs on disk, whatever the store says: the files under `blobs/` by name, and the rows
    /// of `blobs/inline.sqlite3` (small blobs), read with a connection of this test's own.
    static func blobFiles(_ directory: TemporaryDirectory) throws -> [BlobID] {
        let root = directory.url.appendingPathComponent("blobs")
        let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? []
        let rows = try SQLiteDatabase(path: root.appendingPathComponent("inline.sqlite3").path)
            .query("SELECT id FROM blobs").map { try $0.text(0) }
        return (files.filter { !$0.hasDirectoryPath }.map(\.lastPathComponent) + rows).compactMap(BlobID.init(hex:))
    }

    /// An up-server over the production stores in `directory`, on a free port.
    static func server(directory: TemporaryDirectory, clock: ManualClock) throws -> UpServer {
        let configuration = UpServerConfiguration(
            port: 0, dataDirectory: directory.url.path, keys: [UpServerHarness.accessKey: UpServerHarness.secretKey],
            buckets: ["demo", "other"], contextSecret: "test-context-secret-0123456789", threads: 2)
        let index = try SQLiteUpIndex(dataDirectory: directory.url)
        return UpServer(
            configuration: configuration,
            stores: UpStores(blobs: try FileBlockStore(dataDirectory: directory.url), index: index, outbox: index.outbox),
            callbacks: ScriptedCallbacks(), contextSecret: Array("test-context-secret-0123456789".utf8), clock: clock,
            logger: Logger(label: "up-test", sink: LogSink.memory()), metrics: Metrics())
    }
}
