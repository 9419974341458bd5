import Foundation
import NativeTestSupport
import TestSupport
import Testing
import UpCore

#if canImport(Glibc)
import Glibc
#endif

/// What both server executables do before they serve: the one line and exit status of every
/// start-up mistake (issue 10, items 2, 8 and 11), and the warnings about development
/// credentials. Each runs the built binary as a process.
@Suite("biz-server and up-server start-up as processes", .serialized)
struct StartupProcessTests {
    /// `<name>: <message>` and a newline: the whole of standard error.
    private static func oneLine(_ server: ServerFixture, _ message: String) -> String { "\(server.name): \(message)\n" }

    @Test(arguments: ServerFixture.both)
    func onlyOneOfTheProductionKeyVariablesRefusesToStart(name: String) async throws {
        let server = ServerFixture(name)
        defer { server.remove() }
        let path = try server.writeConfiguration(server.validConfiguration)
        let onlyAccess = try await server.run(["--config", path], environment: ["UPGATE_ACCESS_KEY": "prod-ak"])
        #expect(onlyAccess.status == 78, "\(onlyAccess.stderr)")
        #expect(onlyAccess.stderr == Self.oneLine(
            server, "UPGATE_ACCESS_KEY is set but UPGATE_SECRET_KEY is not: set both, or neither"))
        let onlySecret = try await server.run(["--config", path], environment: ["UPGATE_SECRET_KEY": "prod-sk"])
        #expect(onlySecret.status == 78, "\(onlySecret.stderr)")
        #expect(onlySecret.stderr == Self.oneLine(
            server, "UPGATE_SECRET_KEY is set but UPGATE_ACCESS_KEY is not: set both, or neither"))
    }

    @Test(arguments: ServerFixture.both)
    func theDevelopmentConfigurationStartsWithAWarning(name: String) async throws {
        let server = ServerFixture(name)
        defer { server.remove() }
        let process = try server.start([
            "--config", "Config/\(name).json", "--port", "0", "--data-dir", server.directory.appending(path: "data").path,
        ])
        let port = await process.waitUntilListening()
        await process.stop()
        #expect(port != nil, "\(process.standardError)")
        let warnings = process.logLines.filter { $0["level"]?.stringValue == "warning" }
        #expect(warnings.contains { $0["msg"]?.stringValue == "development credentials in use" }, "\(process.standardError)")
        if name == "biz-server" {
            let apiKey = warnings.first { $0["msg"]?.stringValue == "development API key in use" }
            #expect(apiKey?["client"]?.stringValue == "demo", "\(process.standardError)")
        }
        #expect(!process.standardError.contains("dev-secret-key"), "a secret was logged")
    }

    @Test(arguments: ServerFixture.both)
    func productionCredentialsStartWithoutTheWarning(name: String) async throws {
        let server = ServerFixture(name)
        defer { server.remove() }
        let path = try server.writeConfiguration(server.validConfiguration)
        let process = try server.start(
            ["--config", path], environment: ["UPGATE_ACCESS_KEY": "prod-ak", "UPGATE_SECRET_KEY": "prod-sk"])
        let port = await process.waitUntilListening()
        await process.stop()
        #expect(port != nil, "\(process.standardError)")
        #expect(process.log("development credentials in use").isEmpty, "\(process.standardError)")
        #expect(await process.exitStatus() == 0)
    }

    @Test func bizServerWithoutAnyClientWarns() async throws {
        let server = ServerFixture("biz-server")
        defer { server.remove() }
        let path = try server.writeConfiguration(
            #"{"port": 0, "dataDirectory": "\#(server.directory.path)/data", "accessKey": "a", "secretKey": "s"}"#)
        let process = try server.start(["--config", path])
        let port = await process.waitUntilListening()
        await process.stop()
        #expect(port != nil, "\(process.standardError)")
        #expect(process.log("no API client configured").count == 1, "\(process.standardError)")
    }

    @Test(arguments: ServerFixture.both)
    func aMisspeltKeyRefusesToStartAndSuggestsTheRightOne(name: String) async throws {
        let server = ServerFixture(name)
        defer { server.remove() }
        let text = server.validConfiguration.replacingOccurrences(of: #""port": 0"#, with: #""prot": 0"#)
        let path = try server.writeConfiguration(text)
        let result = try await server.run(["--config", path])
        #expect(result.status == 78)
        #expect(result.stderr == Self.oneLine(server, #"unknown key "prot" in \#(path) (did you mean "port"?)"#))
    }

    @Test(arguments: ServerFixture.both)
    func aMisspeltNestedKeyNamesItsPath(name: String) async throws {
        let server = ServerFixture(name)
        defer { server.remove() }
        let (text, wrong, right) = name == "biz-server"
            ? (server.validConfiguration.replacingOccurrences(of: #""keyPrefix""#, with: #""keyprefix""#),
               "clients[0].keyprefix", "clients[0].keyPrefix")
            : (server.validConfiguration.replacingOccurrences(of: #""timeoutSeconds""#, with: #""timeoutSecond""#),
               "callback.timeoutSecond", "callback.timeoutSeconds")
        let path = try server.writeConfiguration(text)
        let result = try await server.run(["--config", path])
        #expect(result.status == 78)
        #expect(result.stderr == Self.oneLine(server, #"unknown key "\#(wrong)" in \#(path) (did you mean "\#(right)"?)"#))
    }

    @Test(arguments: ServerFixture.both)
    func aTrailingCommaNamesLineAndColumn(name: String) async throws {
        let server = ServerFixture(name)
        defer { server.remove() }
        let path = try server.writeConfiguration("{\n  \"port\": 0,\n  \"host\": \"127.0.0.1\",\n}\n")
        let result = try await server.run(["--config", path])
        #expect(result.status == 78)
        #expect(result.stderr == Self.oneLine(server, "invalid JSON in \(path) at line 3, column 22: trailing comma"))
    }

    @Test(arguments: ServerFixture.both)
    func aValueOfTheWrongTypeIsOneLine(name: String) async throws {
        let server = ServerFixture(name)
        defer { server.remove() }
        let text = server.validConfiguration.replacingOccurrences(of: #""port": 0"#, with: #""port": "80""#)
        let path = try server.writeConfiguration(text)
        let result = try await server.run(["--config", path])
        #expect(result.status == 78)
        #expect(result.stderr == Self.oneLine(server, #""port" in \#(path) must be an integer 0…65535, got "80""#))
    }

    @Test(arguments: ServerFixture.both)
    func aMissingFileNamesThePathAndTheOption(name: String) async throws {
        let server = ServerFixture(name)
        defer { server.remove() }
        let path = server.directory.appending(path: "nope.json").path
        let result = try await server.run(["--config", path])
        #expect(result.status == 78)
        #expect(result.stderr == Self.oneLine(
            server, "cannot read configuration \(path): no such file or directory (choose one with --config FILE)"))
    }

    @Test(arguments: ServerFixture.both)
    func aPortOutOfRangeSaysTheRange(name: String) async throws {
        let server = ServerFixture(name)
        defer { server.remove() }
        let result = try await server.run(["--port", "99999"])
        #expect(result.status == 64)
        #expect(result.stderr == Self.oneLine(server, "--port must be a number 0…65535, got '99999'"))
    }

    @Test(arguments: ServerFixture.both)
    func aPortInUseSaysSoInOneLine(name: String) async throws {
        let server = ServerFixture(name)
        defer { server.remove() }
        let occupant = try TCPListener()
        defer { occupant.close() }
        let path = try server.writeConfiguration(server.validConfiguration)
        let result = try await server.run(["--config", path, "--port", String(occupant.port)])
        #expect(result.status == 78)
        // The service opened its data directory first (up-server logs the ctx secret it made):
        // the failure is the last line, after nothing but info-level log lines.
        var lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.popLast() == "")
        #expect(lines.popLast() == "\(name): cannot listen on 127.0.0.1:\(occupant.port): address already in use")
        #expect(lines.allSatisfy { $0.hasPrefix("{") && $0.contains(#""level":"info""#) }, "\(result.stderr)")
    }

    @Test(arguments: ServerFixture.both)
    func versionPrintsTheOneVersionLine(name: String) async throws {
        let server = ServerFixture(name)
        defer { server.remove() }
        let result = try await server.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == "\(name) 0.2.0-dev\n")
        #expect(result.stderr.isEmpty)
    }

    @Test(arguments: ServerFixture.both)
    func sigtermAfterStartExitsZeroWithAStoppedLine(name: String) async throws {
        let server = ServerFixture(name)
        defer { server.remove() }
        let path = try server.writeConfiguration(server.validConfiguration)
        let process = try server.start(["--config", path])
        #expect(await process.waitUntilListening() != nil, "\(process.standardError)")
        process.send(SIGTERM)
        #expect(await process.exitStatus() == 0, "\(process.standardError)")
        #expect(process.log("stopped").count == 1, "\(process.standardError)")
    }
}
