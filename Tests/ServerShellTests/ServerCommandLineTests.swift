import Basics
import ServerShell
import Testing

@Suite("ServerCommandLine")
struct ServerCommandLineTests {
    static func parse(_ arguments: [String]) -> ServerCommandLine.Outcome {
        ServerCommandLine.parse(arguments, name: "x-server", usage: "USAGE", defaultConfig: "Config/x.json")
    }

    @Test func optionsOverrideTheFile() {
        let outcome = Self.parse(["--port", "0", "--host=0.0.0.0", "--data-dir", "/d", "--log-level", "warning"])
        #expect(outcome == .run(ServerCommandLine(
            name: "x-server", configPath: "Config/x.json", logLevel: .warning,
            overrides: .init(port: 0, host: "0.0.0.0", dataDirectory: "/d"))))
    }

    @Test func helpAndVersionPrint() {
        #expect(Self.parse(["--help"]) == .print("USAGE"))
        #expect(Self.parse(["--version"]) == .print(UpgateVersion.line(for: "x-server")))
    }

    @Test(arguments: [
        (["--port", "99999"], "--port must be a number 0…65535, got '99999'"),
        (["--port", "-1"], "--port must be a number 0…65535, got '-1'"),
        (["--prot", "1"], "unknown option --prot (see --help)"),
        (["extra"], "unexpected argument 'extra' (see --help)"),
        (["--log-level", "loud"], "--log-level must be debug, info, warning or error, got 'loud'"),
        (["--config"], "--config needs a value (see --help)"),
    ])
    func badArgumentsAreOneLine(arguments: [String], message: String) {
        #expect(Self.parse(arguments) == .usageError(message))
    }
}
