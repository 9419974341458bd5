import Basics
import Foundation
import TestSupport
import Testing
import UpCore
@testable import UpServer

/// The official Python SDK (`qiniu==7.18.0`, qiniu-protocol.md §9) uploads through our v2 routes
/// on a live up-server, unchanged: `put_file_v2` with 4 MiB parts (v1 hash) and 5 MiB parts (v2
/// hash), `put_stream_v2` without a key and with custom variables and metadata.
///
/// Needs the SDK venv (`scripts/pyenv`, or `UPGATE_PYTHON`); skipped without it — the
/// conformance suite of the biz-server already reports a missing venv.
@Suite("up-server v2 multipart with the official Python SDK")
struct MultipartSDKTests {
    /// Uploads the §10.4 9 MiB pattern three ways and prints `{name: {status, ret}}` as JSON.
    static let script = #"""
        import io, json, os, sys, tempfile
        from qiniu import Auth, Region, UploadProgressRecorder, put_file_v2, put_stream_v2
        base, ak, sk, bucket = sys.argv[1:5]
        auth = Auth(ak, sk)
        regions = [Region(up_host=base)]
        big = bytes(((i * 31) + (i >> 12)) & 0xFF for i in range(9 << 20))
        path = os.path.join(tempfile.mkdtemp(), 'big.bin')
        with open(path, 'wb') as f:
            f.write(big)
        out = {}
        for name, size in (('four', 4 << 20), ('five', 5 << 20)):
            key = 'sdk/%s.bin' % name
            ret, info = put_file_v2(auth.upload_token(bucket, key, 3600), key, path, part_size=size, version='v2',
                                    regions=regions, upload_progress_recorder=UploadProgressRecorder(tempfile.mkdtemp()))
            out[name] = {'status': info.status_code, 'ret': ret}
        policy = {'returnBody': '{"key":"$(key)","hash":"$(etag)","fname":"$(fname)","foo":"$(x:foo)","size":$(fsize)}'}
        ret, info = put_stream_v2(auth.upload_token(bucket, None, 3600, policy), None, io.BytesIO(big), 'big.bin', len(big),
                                  params={'x:foo': 'bar'}, metadata={'x-qn-meta-color': 'red'}, version='v2',
                                  regions=regions, upload_progress_recorder=UploadProgressRecorder(tempfile.mkdtemp()))
        out['stream'] = {'status': info.status_code, 'ret': ret}
        print(json.dumps(out))
        """#

    @Test func theSDKUploadsThroughV2() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let configuration = UpServerConfiguration(
            host: "127.0.0.1", port: 0, keys: [UpServerHarness.accessKey: UpServerHarness.secretKey],
            buckets: [UpServerHarness.bucket], contextSecret: "test-context-secret-0123456789", threads: 2)
        let index = try SQLiteUpIndex(path: directory.url.appendingPathComponent("index.sqlite").path)
        let server = UpServer(
            configuration: configuration,
            stores: UpStores(blobs: try FileBlockStore(dataDirectory: directory.url), index: index, outbox: index.outbox),
            callbacks: ScriptedCallbacks(), contextSecret: Array("test-context-secret-0123456789".utf8),
            clock: SystemClock(), logger: Logger(label: "up-test", sink: LogSink.memory()), metrics: Metrics())
        let port = try server.start()
        let arguments = [
            "-c", Self.script, "http://127.0.0.1:\(port)", UpServerHarness.accessKey, UpServerHarness.secretKey,
            UpServerHarness.bucket,
        ]
        let status: Int32, output: String
        do {
            (status, output) = try await PythonSDK.run(arguments)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
        #expect(status == 0, "SDK run failed:\n\(output)")
        let line = output.split(separator: "\n").last.map(String.init) ?? ""
        let results = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: [String: Any]])

        let four = results["four"]?["ret"] as? [String: Any]
        #expect(results["four"]?["status"] as? Int == 200)
        #expect(four?["hash"] as? String == "litJxRiN_qpEphigieYPgiWEx2e9")
        #expect(four?["key"] as? String == "sdk/four.bin")
        let five = results["five"]?["ret"] as? [String: Any]
        #expect(results["five"]?["status"] as? Int == 200)
        #expect(five?["hash"] as? String == "nlj9SMnk_F66LWrtfa-4ZfCxDv1Z")
        let stream = results["stream"]?["ret"] as? [String: Any]
        #expect(results["stream"]?["status"] as? Int == 200, "\(output)")
        #expect(stream?["key"] as? String == "litJxRiN_qpEphigieYPgiWEx2e9")
        #expect(stream?["fname"] as? String == "big.bin")
        #expect(stream?["foo"] as? String == "bar")
        #expect(stream?["size"] as? Int == 9 << 20)
        let object = try await index.object(bucket: UpServerHarness.bucket, key: "litJxRiN_qpEphigieYPgiWEx2e9")
        #expect(object?.metadata == ["x-qn-meta-color": "red"])
    }
}
