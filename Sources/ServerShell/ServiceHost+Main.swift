import Basics
import Foundation
import HTTPKit
import NativeOS
import Synchronization

extension ServiceHost {
    /// Runs `Service` as the process: the whole of each server's `main.swift`.
    ///
    /// 1. The command line (``ServerCommandLine``): `--help`, `--version` → exit 0; a bad
    ///    argument → one line, exit 64.
    /// 2. The configuration: the file read strictly (``ConfigurationFile``), the environment,
    ///    the command line's overrides, validation; the data directory created. Any mistake →
    ///    one line, exit 78.
    /// 3. ``HostedService/open(configuration:logger:)``: a configuration problem → exit 78,
    ///    anything else (a store that cannot be opened) → one line, exit 1.
    /// 4. The start-up warnings (development credentials…), ``HostedService/prepare()`` (exit 1
    ///    if it fails), then ``run(onHangUp:)``: a port
    ///    that cannot be listened on → `cannot listen on 127.0.0.1:8080: address already in
    ///    use`, exit 78. SIGHUP reloads the configuration (``reload(_:command:environment:running:logger:)``).
    /// 5. After SIGINT/SIGTERM and a clean stop: exit 0.
    public static func main<Service: HostedService>(
        _ service: Service.Type, usage: String, arguments: [String] = Array(CommandLine.arguments.dropFirst()),
        environment: [String: String]? = nil
    ) async -> Never {
        let environment = environment ?? ProcessInfo.processInfo.environment
        let name = Service.Configuration.serviceName
        let command: ServerCommandLine
        switch ServerCommandLine.parse(arguments, name: name, usage: usage, defaultConfig: Service.Configuration.defaultPath) {
        case .print(let text):
            print(text)
            exit(0)
        case .usageError(let message):
            ServerCommandLine.fail(name, message, status: 64)
        case .run(let parsed):
            command = parsed
        }
        // Batched: one write per up to 64 lines or 100 ms instead of one per request; flushed
        // before a failure's line below and by `exit` (LogSink.batchedStandardError).
        let sink = LogSink.batchedStandardError()
        let logger = Logger(label: name, minimumLevel: command.logLevel, sink: sink)
        func fail(_ message: String, status: Int32) -> Never {
            sink.flush()
            command.fail(message, status: status)
        }
        let configuration: Service.Configuration
        do {
            configuration = try load(Service.Configuration.self, command: command, environment: environment)
            try createDataDirectory(configuration.dataDirectory)
        } catch {
            fail(error.description, status: 78)
        }
        let opened: Service
        do {
            opened = try Service.open(configuration: configuration, logger: logger)
        } catch let error as ConfigurationError {
            fail(error.description, status: 78)
        } catch {
            fail("cannot open the data directory \(configuration.dataDirectory): \(error)", status: 1)
        }
        for warning in configuration.warnings { warning.log(to: logger) }
        do {
            try await opened.prepare()
        } catch {
            fail("cannot start: \(error)", status: 1)
        }
        let running = RunningConfiguration(configuration)
        do throws(HTTPServer.StartError) {
            try await opened.host.run {
                reload(opened, command: command, environment: environment, running: running, logger: logger)
            }
        } catch {
            fail(error.description, status: 78)
        }
        exit(0)
    }

    /// Reads `command`'s configuration file and applies the environment and the overrides.
    static func load<Configuration: ServiceConfiguration>(
        _ type: Configuration.Type, command: ServerCommandLine, environment: [String: String]
    ) throws(ConfigurationError) -> Configuration {
        try Configuration.load(path: command.configPath, environment: environment, overrides: command.overrides)
    }

    static func createDataDirectory(_ path: String) throws(ConfigurationError) {
        do {
            try NativeFile.createDirectories(atPath: path)
        } catch {
            throw ConfigurationError("cannot create the data directory \(error.path): \(error.reason)")
        }
    }

    /// SIGHUP: re-reads the file (same path, environment and command line), applies it through
    /// ``HostedService/reload(_:)`` and logs `configuration reloaded` with what changed; a
    /// setting only a restart can apply (address, port, data directory, …) is named in a
    /// warning and keeps its running value. Any failure is logged as `configuration reload
    /// failed` with the one-line reason, and the running configuration stays.
    static func reload<Service: HostedService>(
        _ service: Service, command: ServerCommandLine, environment: [String: String],
        running: RunningConfiguration<Service.Configuration>, logger: Logger
    ) {
        do {
            let new = try load(Service.Configuration.self, command: command, environment: environment)
            let old = running.value
            var summary = try service.reload(new)
            var restart: [String] = []
            if new.host != old.host { restart.append("host") }
            if new.port != old.port { restart.append("port") }
            if new.dataDirectory != old.dataDirectory { restart.append("dataDirectory") }
            summary.needsRestart = restart + summary.needsRestart
            running.value = new
            logger.log(.info, "configuration reloaded", ["config": .string(command.configPath)], more: summary.changes)
            if !summary.needsRestart.isEmpty {
                logger.warning("configuration reload: these settings need a restart", [
                    "settings": .string(summary.needsRestart.joined(separator: ",")),
                ])
            }
            for warning in new.warnings { warning.log(to: logger) }
        } catch {
            logger.error("configuration reload failed", [
                "config": .string(command.configPath), "error": .string(error.description),
                "detail": "keeping the running configuration",
            ])
        }
    }
}

/// The configuration a running service was last given (what a reload compares with).
final class RunningConfiguration<Configuration: Sendable>: Sendable {
    private let current: Mutex<Configuration>

    init(_ configuration: Configuration) { current = Mutex(configuration) }

    var value: Configuration {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}
