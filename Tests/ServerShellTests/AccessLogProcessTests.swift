import Foundation
import TestSupport
import Testing
import UpCore

#if canImport(Glibc)
import Glibc
#endif

/// The servers write their log in batches (LogSink.batchedStandardError): a SIGTERM right after
/// the last answer must still leave one access-log line per request answered, none lost.
@Suite("No access-log line is lost on SIGTERM", .serialized)
struct AccessLogProcessTests {
    @Test(arguments: ServerFixture.both)
    func everyAnsweredRequestIsLoggedAfterSIGTERM(_ name: String) async throws {
        let server = ServerFixture(name)
        defer { server.remove() }
        let path = try server.writeConfiguration(server.validConfiguration)
        let process = try server.start(["--config", path])
        defer { Task { await process.stop() } }
        let port = try #require(await process.waitUntilListening(), "\(process.standardError)")
        let count = 150   // not a multiple of the 64-line batch: the last lines wait in the buffer
        try await BlockingIO.run {
            for _ in 0..<count {
                let reply = try TestHTTPClient.request(port: port, "GET", "/healthz")
                guard reply.status == 200 else { throw CocoaError(.fileReadUnknown) }
            }
        }
        process.send(SIGTERM)
        #expect(await process.exitStatus() == 0, "\(process.standardError)")
        let logged = process.log("request").filter { $0["path"]?.stringValue == "/healthz" }
        #expect(logged.count == count, "\(process.standardError.suffix(600))")
    }
}
