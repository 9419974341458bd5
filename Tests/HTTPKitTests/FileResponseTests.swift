import Foundation
import HTTPKit
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

@Suite struct FileResponseTests {
    @Test func fileBodySendsTheRequestedRange() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("httpkit-\(RequestID.generate())").path
        try Data("0123456789abcdef".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var router = Router()
        router.get("/file") { _, _ in
            guard let handle = FileHandle(forReadingAtPath: path) else { throw HTTPError.notFound }
            // The server owns (and closes) the descriptor it is given; the handle keeps its own.
            let descriptor = dup(handle.fileDescriptor)
            return Response(
                status: 200, headers: ["Content-Type": "application/octet-stream"],
                body: .file(descriptor: descriptor, offset: 4, length: 6)
            )
        }
        try await withServer(router) { port, _, _ in
            let response = try await fetch(port, "GET", "/file")
            #expect(response.status == 200 && response.text == "456789")
            #expect(response.headers["Content-Type"] == "application/octet-stream")
        }
    }
}
