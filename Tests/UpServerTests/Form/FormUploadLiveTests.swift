import HTTPKit
import NativeCrypto
import TestSupport
import Testing
import UpCore
@testable import UpServer

/// `POST /` over a real socket on `127.0.0.1:0`: the body arrives in network-sized pieces, so the
/// streaming path (parser fed piece by piece, blobs appended as they come) is the one exercised.
@Suite("form upload over HTTP")
struct FormUploadLiveTests {
    typealias Form = FormUploadControllerTests

    /// Runs `body` against the harness's server listening on a free port; always shuts it down.
    static func withLiveServer(_ body: (UpServerHarness, Int) async throws -> Void) async throws {
        let harness = UpServerHarness {
            $0.port = 0
            $0.threads = 2
        }
        let port = try harness.server.start()
        do {
            try await body(harness, port)
        } catch {
            await harness.server.shutdown()
            throw error
        }
        await harness.server.shutdown()
    }

    static func post(_ port: Int, _ form: MultipartBody) async throws -> TestHTTPResponse {
        let headers = form.headers.map { ($0.name, $0.value) }
        let body = form.body
        return try await BlockingIO.run {
            try TestHTTPClient.request(port: port, "POST", "/", headers: headers, body: body)
        }
    }

    @Test func nineMebibytesStreamIntoThreeBlobs() async throws {
        try await Self.withLiveServer { harness, port in
            let content = Form.pattern(count: 9 * 1024 * 1024)
            let form = Form.form(
                token: harness.token(), fields: [("key", "big.bin"), ("crc32", String(CRC32.checksum(content)))],
                file: content)
            let response = try await Self.post(port, form)
            #expect(response.status == 200)
            #expect(response.text == #"{"hash":"litJxRiN_qpEphigieYPgiWEx2e9","key":"big.bin"}"#)
            #expect(response.headers["Cache-Control"] == "no-store")
            #expect(response.headers["X-Reqid"] != nil)
            let object = try #require(await harness.index.object(bucket: "demo", key: "big.bin"))
            #expect(object.segments.map(\.length) == [4_194_304, 4_194_304, 1_048_576])
            var stored: [UInt8] = []
            for segment in object.segments { stored += try harness.store.read(segment.blob, range: 0..<segment.length) }
            #expect(stored == content)
        }
    }

    @Test func fsizeLimitStopsTheUploadEarly() async throws {
        try await Self.withLiveServer { harness, port in
            let token = harness.token { $0.fsizeLimit = 64 * 1024 }
            let form = Form.form(token: token, fields: [("key", "big")], file: Form.pattern(count: 1024 * 1024))
            let response = try await Self.post(port, form)
            #expect(response.status == 413)
            #expect(await harness.index.object(bucket: "demo", key: "big") == nil)
            #expect(try harness.store.list().isEmpty)
        }
    }
}
