import Basics
import Foundation
import HTTPTransport
import TestSupport
import Testing
import UpClient
import UpServer

/// UpClient and the official Python SDK (`qiniu==7.18.0`) interoperate both ways: our client
/// uploads with a token the SDK made, and the SDK's `stat` and `etag` agree with what our client
/// uploaded.
@Suite("UpClient ⇄ official Python SDK")
struct SDKInteropTests {
    @Test(arguments: [UploadProtocol.form, .v1, .v2])
    func upCliUploadsWithAnSDKTokenAndTheSDKAgreesOnTheResult(_ choice: UploadProtocol) async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "interop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let up = try UpServer.open(
            configuration: UpServerConfiguration(
                port: 0, dataDirectory: directory.appending(path: "up").path,
                keys: ["dev-access-key": "dev-secret-key"], buckets: ["demo"], threads: 2),
            logger: Logger(label: "up-server", sink: LogSink.memory()))
        let upURL = "http://127.0.0.1:\(try up.start())"
        let key = "interop/\(choice.rawValue).bin"
        let size = choice == .form ? 100_000 : (9 << 20) + 3
        let path = directory.appending(path: "file.bin").path
        try Data((0..<size).map { UInt8(truncatingIfNeeded: ($0 &* 7) ^ ($0 >> 9)) }).write(to: URL(fileURLWithPath: path))

        let result = await Result {
            // 1. The SDK makes the token.
            let (tokenStatus, tokenOutput) = try await PythonSDK.run([
                "-c", "import sys; from qiniu import Auth; print(Auth('dev-access-key','dev-secret-key').upload_token('demo', sys.argv[1], 3600))",
                key,
            ])
            try #require(tokenStatus == 0, "\(tokenOutput)")
            let token = tokenOutput.trimmingCharacters(in: .whitespacesAndNewlines)
            // 2. Our client uploads with it.
            var configuration = UploadClient.Configuration(upHosts: [upURL])
            configuration.protocolChoice = choice
            let uploaded = try await UploadClient(configuration: configuration, transport: try CurlTransport())
                .upload(UploadRequest(filePath: path, key: key, token: .fixed(token)))
            // 3. The SDK's etag of the file and the SDK's stat of the object agree with it.
            let script = """
                import json, sys
                import requests
                from qiniu import Auth, etag
                from qiniu.utils import urlsafe_base64_encode
                up, key, path = sys.argv[1:4]
                auth = Auth('dev-access-key', 'dev-secret-key')
                url = up + '/stat/' + urlsafe_base64_encode('demo:' + key)
                r = requests.get(url, headers={'Authorization': 'QBox ' + auth.token_of_request(url)}, timeout=10)
                print(json.dumps({'etag': etag(path), 'status': r.status_code, 'stat': r.json()}))
                """
            let (status, output) = try await PythonSDK.run(["-c", script, upURL, key, path])
            try #require(status == 0, "\(output)")
            let line = output.split(separator: "\n").last.map(String.init) ?? ""
            let json = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(output)")
            return (uploaded, json)
        }
        await up.shutdown()
        let (uploaded, json) = try result.get()
        let stat = json["stat"] as? [String: Any]
        #expect(json["status"] as? Int == 200)
        #expect(json["etag"] as? String == uploaded.hash)
        #expect(stat?["hash"] as? String == uploaded.hash)
        #expect(stat?["fsize"] as? Int == size)
        #expect(uploaded.key == key)
    }
}
