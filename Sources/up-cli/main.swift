import Basics
import Foundation

// up-cli: parse the command line, run one command, exit with a status from `ExitCode`.
// The work is in PutCommand, EtagCommand and AbortCommand.

func finish(_ failure: CLIFailure) -> Never {
    Console.err("up-cli: \(failure.message)")
    if failure.code == .usage { Console.err("Try 'up-cli --help'.") }
    exit(failure.code.rawValue)
}

let words = Array(CommandLine.arguments.dropFirst())
guard let command = words.first else { finish(.usage("a command is missing: put, etag or abort")) }
if ["--help", "-h", "help"].contains(command) {
    Console.out(Usage.global)
    exit(0)
}
if command == "--version" {
    Console.out(UpgateVersion.line(for: "up-cli"))
    exit(0)
}
let commandHelp = ["put": Usage.put, "etag": Usage.etag, "abort": Usage.abort]
// `-h` / `--help` anywhere before `--` asks for the command's help, whatever else is there.
if let help = commandHelp[command], words.dropFirst().prefix(while: { $0 != "--" }).contains(where: { $0 == "-h" || $0 == "--help" }) {
    Console.out(help)
    exit(0)
}
let environment = ProcessInfo.processInfo.environment
let cwd = FileManager.default.currentDirectoryPath

do throws(CLIFailure) {
    let arguments: Arguments
    do {
        arguments = try Arguments(
            Array(words.dropFirst()), options: command == "etag" ? [] : PutOptions.valueOptions,
            flags: command == "etag" ? [] : PutOptions.flagOptions)
    } catch {
        throw .usage(error.description)
    }
    switch command {
    case "put":
        let options = try PutOptions(arguments, environment: environment, currentDirectory: cwd)
        try await PutCommand(options: options, environment: environment, commandLine: CommandLine.arguments).run()
    case "etag":
        guard arguments.positional.count == 1 else { throw .usage("etag takes exactly one FILE") }
        Console.out(try EtagCommand.run(path: arguments.positional[0]))
    case "abort":
        let options = try PutOptions(arguments, environment: environment, currentDirectory: cwd)
        try await AbortCommand(options: options, environment: environment).run()
    default:
        throw .usage("unknown command '\(command)': put, etag or abort")
    }
} catch {
    finish(error)
}
exit(0)
