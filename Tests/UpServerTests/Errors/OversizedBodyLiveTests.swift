import Foundation
import HTTPKit
import TestSupport
import Testing
@testable import UpServer

/// Issue 10, item 5: a body over a route's limit gets `413 {"error": …}` over a real socket,
/// whether its length was announced (`Content-Length`, refused before a byte is read) or not
/// (`Transfer-Encoding: chunked`, refused as the limit is passed, with the rest still arriving).
@Suite("oversized bodies on up-server over HTTP")
struct OversizedBodyLiveTests {
    static let twentyMegabytes = [UInt8](repeating: 0x41, count: 20_000_000)

    @Test(arguments: [false, true])
    func anOversizedBodyGets413JSON(chunked: Bool) async throws {
        try await FormUploadLiveTests.withLiveServer { harness, port in
            let token = harness.token()
            let routes: [(String, Int)] = [("/mkblk/4194304", 4_194_304), ("/mkfile/10", BlocksController.maxMkfileBody)]
            for (target, limit) in routes {
                let body = Self.twentyMegabytes
                let response = try await BlockingIO.run {
                    let client = try TestHTTPClient(port: port)
                    defer { client.close() }
                    return try client.requestAllowingEarlyReply(
                        "POST", target, headers: [("Authorization", "UpToken \(token)")], body: body, chunked: chunked)
                }
                #expect(response.status == 413, "\(target) chunked=\(chunked): \(response.text)")
                #expect(response.text == #"{"error":"request body exceeds \#(limit) bytes"}"#, "\(target)")
                #expect(response.headers["X-Reqid"] != nil)
            }
        }
    }
}
