public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A private PostgreSQL server for tests: `initdb` into a temporary directory, started on a free
/// 127.0.0.1 port, never the system service. The work is done by `scripts/lib/postgres.sh`
/// (the scripts' clusters are the same), run as the unprivileged user `scripts/bootstrap` makes
/// when the tests run as root.
///
/// ```swift
/// let url = try await PostgresCluster.shared().createDatabase("outbox")
/// let pool = PostgresPool(try PostgresConnectionString(url))
/// ```
///
/// ``shared()`` is started once per test process (~2 s) and each test makes its own database in
/// it (a few ms). A test that restarts or stops the server takes a cluster of its own
/// (``start()``), so the others are not disturbed.
///
/// Nothing is left running: each cluster has a watchdog (`pg_cluster_watch`) reading a pipe this
/// process holds open. At exit, the pipe is closed and the watchdog stops the server by its
/// pid and removes the directory, waited for here; if this process dies any other way, the
/// kernel closes the pipe and the watchdog does the same on its own.
public final class PostgresCluster: @unchecked Sendable {
    /// The directory holding the cluster (data, socket, password file, logs).
    public let directory: URL
    /// The server's TCP port on 127.0.0.1.
    public let port: Int
    private let watchdog: Process
    private let watchdogInput: Pipe

    /// Room for many tests' pools at once (the default is 100).
    private static let sharedCluster = Task { try await PostgresCluster.start(settings: ["max_connections=200"]) }
    private static let live = Mutex<[PostgresCluster]>([])
    private static let databaseCount = Mutex(0)

    /// The process's shared cluster, started by the first caller.
    ///
    /// - Throws: ``Failure`` when PostgreSQL is missing (run `scripts/bootstrap`) or does not start.
    public static func shared() async throws -> PostgresCluster { try await sharedCluster.value }

    /// Starts a cluster of the caller's own; ``stop()`` it when done (it is stopped at exit anyway).
    ///
    /// - Parameter settings: Extra server settings (`"max_connections=20"`).
    public static func start(settings: [String] = []) async throws -> PostgresCluster {
        // /tmp, not $TMPDIR: the server's user must reach it, and the socket path must stay short.
        let directory = URL(fileURLWithPath: "/tmp/upgate-pg-\(UUID().uuidString.prefix(12).lowercased())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        try await script("pg_cluster_start", [directory.path] + settings)
        let port = try String(contentsOf: directory.appending(path: "port"), encoding: .utf8)
        guard let port = Int(port.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw Failure(message: "no port written to \(directory.path)")
        }
        let cluster = try PostgresCluster(directory: directory, port: port)
        live.withLock { $0.append(cluster) }
        Self.registerAtExit
        return cluster
    }

    private init(directory: URL, port: Int) throws {
        self.directory = directory
        self.port = port
        watchdogInput = Pipe()
        watchdog = try Self.process("pg_cluster_watch", [directory.path])
        watchdog.standardInput = watchdogInput
        // Not this process's output: `swift test` reads that to its end, which would then wait
        // for the watchdog too.
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try watchdog.run()
    }

    /// The URL of `database` (`postgresql://upgate@127.0.0.1:PORT/DATABASE?passfile=…`): the
    /// password comes from the cluster's password file, as in production from a file or the environment.
    public func url(database: String = "postgres") async throws -> String {
        try await Self.script("pg_cluster_url", [directory.path, database])
    }

    /// Creates an empty database whose name (`prefix_N`) no other test in this process uses.
    ///
    /// - Returns: Its URL.
    public func createDatabase(_ prefix: String = "test") async throws -> String {
        let number = Self.databaseCount.withLock {
            $0 += 1
            return $0
        }
        let name = "\(prefix.lowercased().filter { ($0.isLetter && $0.isASCII) || $0.isNumber || $0 == "_" })_\(number)"
        return try await Self.script("pg_cluster_createdb", [directory.path, name])
    }

    /// Restarts the server (`pg_ctl restart -m fast`): every connection is dropped, the port stays.
    public func restart() async throws { try await Self.script("pg_cluster_restart", [directory.path]) }

    /// Stops the server by its pid, leaving the data for a later ``resume()``.
    public func pause() async throws { try await Self.script("pg_cluster_stop", [directory.path]) }

    /// Starts a paused server again, on the same port.
    public func resume() async throws { try await Self.script("pg_cluster_start", [directory.path]) }

    /// Stops the server and removes its directory (the watchdog does both, and is waited for).
    public func stop() async {
        let cluster = self
        Self.live.withLock { $0.removeAll { $0 === cluster } }
        _ = try? await BlockingIO.run { cluster.stopNow() }
    }

    /// Closes the watchdog's pipe and waits (bounded) for it to stop the server and remove the directory.
    private func stopNow() {
        try? watchdogInput.fileHandleForWriting.close()
        // The watchdog's own stop is bounded (~24 s); this bound only guards against a hung shell.
        for _ in 0..<600 where watchdog.isRunning { usleep(50_000) }
    }

    /// Registers ``stopAllAtExit()`` with `atexit` once, on first use.
    private static let registerAtExit: Void = {
        atexit { PostgresCluster.stopAllAtExit() }
    }()

    private static func stopAllAtExit() {
        let clusters = live.withLock { live in
            defer { live.removeAll() }
            return live
        }
        for cluster in clusters { cluster.stopNow() }
    }

    /// Runs a `scripts/lib/postgres.sh` function to its end and returns what it printed on
    /// standard output, trimmed.
    @discardableResult
    private static func script(_ function: String, _ arguments: [String]) async throws -> String {
        let stem = FileManager.default.temporaryDirectory.appending(path: "upgate-pg-\(UUID().uuidString)").path
        let (output, errors) = (URL(fileURLWithPath: stem + ".out"), URL(fileURLWithPath: stem + ".err"))
        for file in [output, errors] { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
        defer { for file in [output, errors] { try? FileManager.default.removeItem(at: file) } }
        let process = try process(function, arguments)
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        process.standardInput = FileHandle.nullDevice
        let status = try await BlockingIO.run {
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        guard status == 0 else {
            let text = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            throw Failure(message: "\(function) \(arguments.joined(separator: " ")) exited \(status): \(text)")
        }
        return ((try? String(contentsOf: output, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func process(_ function: String, _ arguments: [String]) throws -> Process {
        let library = PythonSDK.repositoryRoot.appending(path: "scripts/lib/postgres.sh").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", "source \"$0\" && \"$@\"", library, function] + arguments
        return process
    }

    /// A cluster could not be started or driven.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong, with the script's output.
        public var message: String
        /// The message.
        public var description: String { "PostgresCluster: \(message)" }
    }
}
