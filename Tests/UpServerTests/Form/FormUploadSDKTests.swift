import Foundation
import TestSupport
import Testing
@testable import UpServer

/// The official Qiniu Python SDK (`qiniu==7.18.0`, from `scripts/pyenv` → `.build/pyenv`, or
/// `UPGATE_PYTHON`) uploads through `POST /` unchanged (qiniu-protocol.md §6, §9.1): `put_data`
/// with custom variables, metadata, mime type and fname; `put_file` for a 0-byte file (form,
/// no crc32) and a 5 MiB file (form, with crc32); `put_file` with `check_crc=True`.
@Suite("form upload with the official Python SDK")
struct FormUploadSDKTests {
    static let script = #"""
        import json, os, sys, tempfile, time
        from qiniu import Auth, put_data, put_file, etag, Region
        base, ak, sk, server_now = sys.argv[1:5]
        # The harness runs on a manual clock: give every token an hour of *its* time.
        expires = int(server_now) + 3600 - int(time.time())
        q = Auth(ak, sk)
        local = [Region(up_host=base)]
        out = {}
        tok = q.upload_token('demo', 'hello.txt', expires)
        ret, info = put_data(tok, 'hello.txt', b'hello', params={'x:a': 'A'}, mime_type='text/plain',
                             fname='h.txt', metadata={'x-qn-meta-color': 'red'}, regions=local)
        out['hello'] = [info.status_code, ret]
        folder = tempfile.mkdtemp()
        empty = os.path.join(folder, 'empty.bin')
        open(empty, 'wb').close()
        tok = q.upload_token('demo', None, expires, {'returnBody': '{"key":"$(key)","size":$(fsize),"name":$(fname)}'})
        ret, info = put_file(tok, None, empty, regions=local)
        out['empty'] = [info.status_code, ret]
        big = os.path.join(folder, 'five.bin')
        with open(big, 'wb') as f:
            f.write(bytes(((i * 31) + (i >> 12)) & 0xFF for i in range(5 << 20)))
        tok = q.upload_token('demo', 'five.bin', expires)
        ret, info = put_file(tok, 'five.bin', big, check_crc=True, regions=local)
        out['five'] = [info.status_code, ret, etag(big)]
        ret, info = put_data(q.upload_token('demo', 'other', expires), 'hello.txt', b'x', regions=local)
        out['scope'] = [info.status_code, info.error]
        print(json.dumps(out))
        """#

    static var python: String? {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let candidates: [String?] = [
            ProcessInfo.processInfo.environment["UPGATE_PYTHON"], root.appending(path: ".build/pyenv/bin/python3").path,
        ]
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test func theSDKUploadsThroughTheForm() async throws {
        guard let python = Self.python else {
            Issue.record("the SDK venv is missing: run scripts/pyenv (scripts/test does)")
            return
        }
        try await FormUploadLiveTests.withLiveServer { harness, port in
            let arguments = ["-c", Self.script, "http://127.0.0.1:\(port)", UpServerHarness.accessKey, UpServerHarness.secretKey,
                             String(harness.now)]
            let output = try await BlockingIO.run { try Self.run(python, arguments) }
            // The result is the last line; anything before it (warnings, a traceback) shows on failure.
            let last = output.split(separator: "\n").last.map(String.init) ?? ""
            let json = try #require(
                (try? JSONSerialization.jsonObject(with: Data(last.utf8))) as? [String: [Any]], "\(output)")
            #expect(json["hello"]?.first as? Int == 200)
            #expect(json["hello"]?.last as? [String: String] == ["hash": "Fqr0xh3cxeii2r7eDztILNmuqUNN", "key": "hello.txt"])
            let hello = try #require(await harness.index.object(bucket: "demo", key: "hello.txt"))
            #expect(hello.mimeType == "text/plain")
            #expect(hello.metadata == ["x-qn-meta-color": "red"])

            #expect(json["empty"]?.first as? Int == 200)
            let empty = json["empty"]?.last as? [String: Any]
            #expect(empty?["key"] as? String == "Fto5o-5ea0sNMlW_75VgGJCv2AcJ")
            #expect(empty?["size"] as? Int == 0)
            #expect(empty?["name"] as? String == "empty.bin")

            let five = json["five"] ?? []
            #expect(five.first as? Int == 200)
            #expect((five.dropFirst().first as? [String: String])?["hash"] == five.last as? String)
            #expect(await harness.index.object(bucket: "demo", key: "five.bin")?.segments.map(\.length) == [4_194_304, 1_048_576])

            #expect(json["scope"]?.first as? Int == 403)
        }
    }

    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
