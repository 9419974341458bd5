public import Foundation
public import UpCore

#if canImport(Glibc)
import Glibc
#endif

/// A built server executable (`biz-server`, `up-server`) run as a child process, for tests of
/// what only a process shows: exit statuses, the one line printed on a bad start, signals, the
/// JSON log on standard error. Standard output and error go to files in `directory`.
///
/// Every process is stopped by its own pid (``stop()``); every wait is bounded.
public final class ServerProcess: @unchecked Sendable {
    /// The child.
    public let process: Process
    /// Where its standard error (the JSON log, or the one-line failure) goes.
    public let stderrPath: String
    /// Where its standard output goes.
    public let stdoutPath: String

    /// The executable `name` in the build directory the tests were built into.
    ///
    /// - Throws: ``Missing`` when it has not been built (`swift build` builds it).
    public static func binary(_ name: String) throws -> String {
        let path = PythonSDK.repositoryRoot.appending(path: ".build/debug/\(name)").path
        guard FileManager.default.isExecutableFile(atPath: path) else { throw Missing(path: path) }
        return path
    }

    /// The executable was not built.
    public struct Missing: Error, CustomStringConvertible {
        /// The path looked at.
        public var path: String
        /// Says how to build it.
        public var description: String { "\(path) is missing: run swift build first" }
    }

    /// Starts `name` with `arguments`; `environment` is added to this process's environment with
    /// every `UPGATE_*` variable removed first, so the developer's shell cannot leak into a test.
    /// Runs in the repository root, so `Config/…` paths resolve.
    public init(
        _ name: String, arguments: [String], environment: [String: String] = [:], directory: URL
    ) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let stamp = UUID().uuidString.prefix(8)
        stderrPath = directory.appending(path: "\(name)-\(stamp).err").path
        stdoutPath = directory.appending(path: "\(name)-\(stamp).out").path
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.binary(name))
        process.arguments = arguments
        process.currentDirectoryURL = PythonSDK.repositoryRoot
        var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("UPGATE_") }
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        try process.run()
        self.process = process
    }

    /// Runs `name` to its end (at most `timeout`, then it is killed) and returns its exit status
    /// (nil if a signal ended it) with what it wrote.
    public static func run(
        _ name: String, arguments: [String], environment: [String: String] = [:], directory: URL,
        timeout: Duration = .seconds(30)
    ) async throws -> (status: Int32?, stdout: String, stderr: String) {
        let child = try ServerProcess(name, arguments: arguments, environment: environment, directory: directory)
        let status = await child.exitStatus(timeout: timeout)
        if status == nil && child.process.isRunning { await child.stop() }
        return (status, child.standardOutput, child.standardError)
    }

    /// Everything written to standard error so far.
    public var standardError: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
    /// Everything written to standard output so far.
    public var standardOutput: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }

    /// The JSON log lines written so far (lines that are not JSON are skipped).
    public var logLines: [JSONValue] {
        standardError.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
    }

    /// The log lines whose `msg` is `message`.
    public func log(_ message: String) -> [JSONValue] {
        logLines.filter { $0["msg"]?.stringValue == message }
    }

    /// Waits until `count` lines with `msg == message` are in the log; returns the last, or nil
    /// if the process ended first or `timeout` passed.
    public func waitForLog(_ message: String, count: Int = 1, timeout: Duration = .seconds(30)) async -> JSONValue? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let found = log(message)
            if found.count >= count { return found.last }
            if !process.isRunning { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// Waits for the shell's `listening` line and returns the port it names.
    public func waitUntilListening(timeout: Duration = .seconds(30)) async -> Int? {
        guard let line = await waitForLog("listening", timeout: timeout) else { return nil }
        return line["port"]?.int64Value.map { Int($0) }
    }

    /// Sends `signal` to the child's pid.
    public func send(_ signal: Int32) { _ = kill(process.processIdentifier, signal) }

    /// Waits for the child to end (at most `timeout`): its exit status, or nil when a signal
    /// ended it or it is still running.
    public func exitStatus(timeout: Duration = .seconds(30)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        guard !process.isRunning else { return nil }
        return process.terminationReason == .exit ? process.terminationStatus : nil
    }

    /// The signal that ended the child, if one did.
    public var terminatingSignal: Int32? {
        !process.isRunning && process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil
    }

    /// Stops the child: SIGTERM, then SIGKILL if it has not ended within 10 s.
    public func stop() async {
        guard process.isRunning else { return }
        send(SIGTERM)
        if await exitStatus(timeout: .seconds(10)) == nil && process.isRunning {
            send(SIGKILL)
            _ = await exitStatus(timeout: .seconds(10))
        }
    }
}
