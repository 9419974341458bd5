import Foundation
import TestSupport
import Testing
@testable import UpServer

/// Two put-policy rules checked with the official Qiniu Python SDK (`qiniu==7.18.0`) as the
/// client, on every path it can drive (form `put_data`, v1 `put_file`, v2 `put_file_v2`):
///
/// - issue 10 item 1: `mimeLimit` is matched against the type *detected from the content*,
///   whatever type the client declares and whatever `detectMime` says (the put-policy document:
///   "七牛服务器会侦测文件内容以判断 MimeType，再用判断值跟指定值进行匹配"); the stored
///   `mimeType` is still chosen as before (the declared one unless `detectMime`);
/// - issue 10 item 4: a bucket-only scope without `insertOnly` overwrites through v1 (the
///   document: "分片上传 v1 版 需要指定 insertOnly 为 1 才是新增，否则也为覆盖上传"); form
///   and v2 keep the bucket scope insert-only.
@Suite("put-policy rules with the official Python SDK")
struct UploadPolicySDKTests {
    static let script = #"""
        import json, os, sys, tempfile, time
        from qiniu import Auth, Region, UploadProgressRecorder, config, put_data, put_file, put_file_v2
        # put_file takes the resumable path (v1 or v2) for any file above this threshold.
        config.set_default(default_upload_threshold=1)
        base, ak, sk, server_now = sys.argv[1:5]
        expires = int(server_now) + 3600 - int(time.time())  # the harness runs on a manual clock
        q = Auth(ak, sk)
        regions = [Region(up_host=base)]
        folder = tempfile.mkdtemp()
        PNG = b'\x89PNG\r\n\x1a\n' + bytes(range(64))
        TEXT = b'plain text, not an image\n' * 4
        def write(name, data):
            path = os.path.join(folder, name)
            with open(path, 'wb') as f:
                f.write(data)
            return path
        def upload(way, token, key, data, mime_type=None):
            kwargs = {} if mime_type is None else {'mime_type': mime_type}
            if way == 'form':
                return put_data(token, key, data, regions=regions, **kwargs)
            path = write(key.replace('/', '_'), data)
            recorder = UploadProgressRecorder(tempfile.mkdtemp())
            if way == 'v1':
                return put_file(token, key, path, version='v1', regions=regions, upload_progress_recorder=recorder, **kwargs)
            return put_file_v2(token, key, path, version='v2', regions=regions, upload_progress_recorder=recorder, **kwargs)
        out = {}
        for detect in (0, 1):
            policy = {'mimeLimit': 'image/*', 'detectMime': detect}
            for case, data, declared in (('text-as-png', TEXT, 'image/png'), ('png-as-text', PNG, 'text/plain')):
                for way in ('form', 'v1', 'v2'):
                    key = 'mime/%s/%s/%d' % (way, case, detect)
                    ret, info = upload(way, q.upload_token('demo', key, expires, policy), key, data, declared)
                    out[key] = info.status_code
        for way in ('form', 'v1', 'v2'):
            key = 'overwrite/' + way
            _, first = put_data(q.upload_token('demo', key, expires), key, b'old content', regions=regions)
            _, second = upload(way, q.upload_token('demo', None, expires), key, b'new content ' * 8)
            out[key] = [first.status_code, second.status_code]
        key = 'overwrite/v1-insert-only'
        _, first = put_data(q.upload_token('demo', key, expires), key, b'old content', regions=regions)
        _, second = upload('v1', q.upload_token('demo', None, expires, {'insertOnly': 1}), key, b'new content ' * 8)
        out[key] = [first.status_code, second.status_code]
        print(json.dumps(out))
        """#

    @Test func mimeLimitMatchesTheDetectedTypeAndV1OverwritesUnderABucketScope() async throws {
        try await FormUploadLiveTests.withLiveServer { harness, port in
            let arguments = [
                "-c", Self.script, "http://127.0.0.1:\(port)", UpServerHarness.accessKey, UpServerHarness.secretKey,
                String(harness.now),
            ]
            let output = try await PythonSDK.run(arguments).output
            let last = output.split(separator: "\n").last.map(String.init) ?? ""
            let results = try #require(
                (try? JSONSerialization.jsonObject(with: Data(last.utf8))) as? [String: Any], "\(output)")

            for way in ["form", "v1", "v2"] {
                for detect in [0, 1] {
                    #expect(results["mime/\(way)/text-as-png/\(detect)"] as? Int == 403, "\(way) detectMime \(detect)")
                    let accepted = "mime/\(way)/png-as-text/\(detect)"
                    #expect(results[accepted] as? Int == 200, "\(way) detectMime \(detect)")
                    // What is stored is chosen as before: the declared type unless detectMime.
                    let stored = await harness.index.object(bucket: "demo", key: accepted)?.mimeType
                    #expect(stored == (detect == 0 ? "text/plain" : "image/png"), "\(accepted)")
                    #expect(await harness.index.object(bucket: "demo", key: "mime/\(way)/text-as-png/\(detect)") == nil)
                }
            }

            let newContent = Array(String(repeating: "new content ", count: 8).utf8)
            #expect(results["overwrite/v1"] as? [Int] == [200, 200])
            #expect(try await harness.content(key: "overwrite/v1") == newContent)
            for key in ["overwrite/form", "overwrite/v2", "overwrite/v1-insert-only"] {
                #expect(results[key] as? [Int] == [200, 614], "\(key)")
                #expect(try await harness.content(key: key) == Array("old content".utf8), "\(key)")
            }
        }
    }
}
