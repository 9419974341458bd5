import Foundation
import TestSupport
import Testing
import UpCore

#if canImport(Glibc)
import Glibc
#endif

/// `trustedProxies`, read for both servers in one place (`CommonSettings`): behind a trusted
/// proxy the access log names the client from `X-Forwarded-For`; from anyone else the header is
/// ignored, so a client cannot choose the address it is logged (and, at biz-server, limited) by.
@Suite("trustedProxies on both servers", .serialized)
struct TrustedProxiesProcessTests {
    @Test(arguments: ServerFixture.both)
    func theAccessLogNamesTheClientOnlyBehindATrustedProxy(_ name: String) async throws {
        #expect(try await Self.loggedRemote(name, trusting: #"["127.0.0.0/8"]"#) == "198.51.100.7")
        #expect(try await Self.loggedRemote(name, trusting: nil) == "127.0.0.1")
        #expect(try await Self.loggedRemote(name, trusting: #"["10.0.0.0/8"]"#) == "127.0.0.1")
    }

    @Test(arguments: ServerFixture.both)
    func aBlockThatIsNotOneStopsTheServerNamingIt(_ name: String) async throws {
        let server = ServerFixture(name)
        defer { server.remove() }
        let path = try server.writeConfiguration(Self.configuration(server, trusting: #"["127.0.0.0/8", "10.0.0.0/33"]"#))
        let run = try await server.run(["--config", path])
        #expect(run.status == 78, "\(run.stderr)")
        #expect(run.stderr.contains("trustedProxies[1]"), "\(run.stderr)")
    }

    /// The `remote` of the access-log line of one `GET /healthz` sent from 127.0.0.1 through a
    /// proxy that says the client is 198.51.100.7, to a server trusting `blocks` (JSON; nil: key absent).
    static func loggedRemote(_ name: String, trusting blocks: String?) async throws -> String? {
        let server = ServerFixture(name)
        defer { server.remove() }
        let path = try server.writeConfiguration(configuration(server, trusting: blocks))
        let process = try server.start(["--config", path])
        defer { Task { await process.stop() } }
        let port = try #require(await process.waitUntilListening(), "\(process.standardError)")
        let reply = try await BlockingIO.run {
            try TestHTTPClient.request(port: port, "GET", "/healthz", headers: [("X-Forwarded-For", "198.51.100.7")])
        }
        #expect(reply.status == 200)
        process.send(SIGTERM)
        _ = await process.exitStatus()
        return process.log("request").last { $0["path"]?.stringValue == "/healthz" }?["remote"]?.stringValue
    }

    static func configuration(_ server: ServerFixture, trusting blocks: String?) -> String {
        guard let blocks else { return server.validConfiguration }
        var text = server.validConfiguration
        let open = text.firstIndex(of: "{")!
        text.insert(contentsOf: "\n  \"trustedProxies\": \(blocks),", at: text.index(after: open))
        return text
    }
}
