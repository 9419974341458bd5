import Basics
import BizServer
import Foundation
import HTTPKit
import Synchronization
import TestSupport
import Testing
import UpCore
import UpServer

#if canImport(Glibc)
import Glibc
#endif

/// The built `up-cli` as a process against in-process up-server and biz-server: killed with
/// SIGKILL at 5 random points of one upload (no chance to save anything on the way out), then
/// run again with the same arguments each time. It must end with the file's etag, resumed from the
/// checkpoint, the checkpoint gone, and exactly one biz-server record. A first Ctrl-C (SIGINT)
/// must pause with exit status 130 and keep the checkpoint.
@Suite("up-cli as a process: kill -9 and resume", .serialized)
struct UpCliProcessTests {
    static let fileSize = 16 << 20

    @Test func fiveKillNinesThenTheSameCommandFinishes() async throws {
        try await Chain.run { chain in try await Self.killNineFiveTimes(chain) }
    }

    static func killNineFiveTimes(_ chain: Chain) async throws {
        let file = try chain.makeFile(named: "kill9.bin", size: Self.fileSize, seed: 9)
        let key = "demo/kill9.bin"
        let arguments = chain.putArguments(file: file, key: key)

        // Increasing random fractions: each run gets further before it is killed.
        var fractions = (0..<5).map { _ in Double.random(in: 0.05...0.7) }.sorted()
        // Spread them a little so two kills never land on the same chunk.
        for index in 1..<fractions.count where fractions[index] - fractions[index - 1] < 0.04 {
            fractions[index] = min(0.75, fractions[index - 1] + 0.04)
        }
        var found: [Bool] = []
        for (round, fraction) in fractions.enumerated() {
            let run = try chain.launch(arguments, output: "run\(round).jsonl")
            let reached = try await run.waitForProgress(atLeast: Int64(Double(Self.fileSize) * fraction), timeout: .seconds(60))
            try #require(reached, "round \(round): the upload ended before \(Int(fraction * 100)) %: \(run.output())")
            run.kill(SIGKILL)
            let status = await run.exitStatus()
            #expect(status == nil, "round \(round): expected death by SIGKILL, got exit \(String(describing: status))")
            found.append(run.startEvent()?["checkpointFound"] == .bool(true))
        }
        let last = try chain.launch(arguments, output: "final.jsonl")
        let status = await last.exitStatus()
        let output = last.output()
        let details = output + "\n" + last.errors()
        try #require(status == 0, "the final run failed (\(String(describing: status))): \(details)")
        let done = try #require(last.event("done"), "\(output)")
        #expect(done["hash"]?.stringValue == Etag.of(try Data(contentsOf: URL(fileURLWithPath: file))))
        #expect(done["size"]?.int64Value == Int64(Self.fileSize))
        #expect(done["resumed"] == .bool(true), "the final run did not resume: \(output)")
        #expect(last.startEvent()?["checkpointFound"] == .bool(true))
        #expect(found.dropFirst().allSatisfy { $0 }, "a run after a kill found no checkpoint: \(found), fractions \(fractions)")
        #expect(!FileManager.default.fileExists(atPath: chain.checkpoint), "the checkpoint survived the success")
        let records = try await chain.store.uploads(clientID: "demo", limit: 10, after: nil)
        #expect(records.count == 1, "records: \(records.map(\.key))")
        #expect(records.first?.key == key)
        #expect(records.first?.hash == done["hash"]?.stringValue)
        #expect(done["reply"]?["id"]?.stringValue == records.first?.id, "the reply is not the record")
    }

    @Test func ctrlCPausesWithStatus130AndTheSameCommandResumes() async throws {
        try await Chain.run { chain in try await Self.pauseAndResume(chain) }
    }

    static func pauseAndResume(_ chain: Chain) async throws {
        let file = try chain.makeFile(named: "sigint.bin", size: Self.fileSize, seed: 2)
        let arguments = chain.putArguments(file: file, key: "demo/sigint.bin")

        let first = try chain.launch(arguments, output: "first.jsonl")
        let reached = try await first.waitForProgress(atLeast: Int64(Self.fileSize / 3), timeout: .seconds(60))
        try #require(reached, "the upload ended before a third: \(first.output())")
        first.kill(SIGINT)
        let paused = await first.exitStatus()
        let details = first.output() + "\n" + first.errors()
        #expect(paused == 130, "\(details)")
        let event = try #require(first.event("paused"), "\(first.output())")
        #expect(event["checkpointKept"] == .bool(true))
        #expect(FileManager.default.fileExists(atPath: chain.checkpoint))
        #expect(first.errors().contains("run the same command again to resume"))
        #expect(!first.errors().contains("dev-api-key") && !first.output().contains("dev-api-key"), "the API key was printed")

        let second = try chain.launch(arguments, output: "second.jsonl")
        let status = await second.exitStatus()
        let secondDetails = second.output() + "\n" + second.errors()
        try #require(status == 0, "\(secondDetails)")
        let done = try #require(second.event("done"))
        #expect(done["resumed"] == .bool(true))
        let skipped = done["bytesSkipped"]?.int64Value ?? 0
        #expect(skipped >= Int64(Self.fileSize / 4), "only \(skipped) bytes skipped")
        #expect(done["hash"]?.stringValue == Etag.of(try Data(contentsOf: URL(fileURLWithPath: file))))
    }
}

/// `--timeout` and `--retries` (scripts/chaos/net-fault needs a stall noticed in seconds, not
/// after the 60 s default): against an up host that takes every request and never answers, `put`
/// sends the request 1 + retries times, each given up after the timeout, then exits 1 as a
/// network failure.
@Suite("up-cli as a process: --timeout and --retries", .serialized)
struct UpCliTimeoutTests {
    @Test func aStalledUpHostIsGivenUpAfterTimeoutTimesTries() async throws {
        try await Chain.run { chain in
            let hits = Mutex(0)
            var router = Router()
            router.post("/mkblk/:size") { _, _ in
                hits.withLock { $0 += 1 }
                try await Task.sleep(for: .seconds(30))
                return Response()
            }
            let server = HTTPServer(
                configuration: .init(threadCount: 2, handlerTimeout: .seconds(60), shutdownGracePeriod: .milliseconds(200)),
                router: router, logger: Logger(label: "stalled", sink: LogSink.memory()))
            let port = try server.start()
            let file = try chain.makeFile(named: "stalled.bin", size: 1000, seed: 3)
            let started = ContinuousClock.now
            let run = try chain.launch(
                ["put", file, "--key", "demo/stalled.bin", "--biz", chain.bizURL, "--api-key", "dev-api-key",
                 "--up-host", "http://127.0.0.1:\(port)", "--protocol", "v1", "--no-checkpoint", "--json",
                 "--timeout", "1", "--retries", "2"],
                output: "stalled.jsonl")
            let status = await run.exitStatus()
            let elapsed = ContinuousClock.now - started
            await server.shutdown()
            let details = run.output() + "\n" + run.errors()
            #expect(status == 1, "\(details)")
            #expect(run.event("error")?["kind"]?.stringValue == "network", "\(details)")
            #expect(hits.withLock { $0 } == 3, "requests seen: \(hits.withLock { $0 })")
            // 3 timeouts of 1 s plus two backoffs (0.25-0.5 s, 0.5-1 s); the 60 s default would be 180 s.
            #expect(elapsed >= .seconds(3) && elapsed < .seconds(20), "took \(elapsed)")
        }
    }
}

/// up-server and biz-server in this process, on free loopback ports, and a work directory.
final class Chain {
    let directory: URL
    let up: UpServer
    let biz: BizServer
    let store: SQLiteUploadRecordStore
    let bizURL: String
    let upURL: String
    let binary: String
    var checkpoint: String { directory.appending(path: "ckpt.json").path }

    private init(
        directory: URL, up: UpServer, biz: BizServer, store: SQLiteUploadRecordStore, bizURL: String, upURL: String, binary: String
    ) {
        self.directory = directory
        self.up = up
        self.biz = biz
        self.store = store
        self.bizURL = bizURL
        self.upURL = upURL
        self.binary = binary
    }

    static func start() async throws -> Chain {
        let binary = PythonSDK.repositoryRoot.appending(path: ".build/debug/up-cli").path
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build up-cli first (swift build)")
        let directory = FileManager.default.temporaryDirectory.appending(path: "up-cli-\(UUID().uuidString)")
        let bizDirectory = directory.appending(path: "biz")
        try FileManager.default.createDirectory(at: bizDirectory, withIntermediateDirectories: true)
        let logs = LogSink.memory()
        let up = try UpServer.open(
            configuration: UpServerConfiguration(
                port: 0, dataDirectory: directory.appending(path: "up").path,
                keys: ["dev-access-key": "dev-secret-key"], buckets: ["demo"], threads: 2),
            logger: Logger(label: "up-server", sink: logs))
        let upPort = try up.start()
        let store = try SQLiteUploadRecordStore(path: bizDirectory.appending(path: "uploads.sqlite3").path, durableWrites: false)
        let biz = BizServer(
            configuration: BizServerConfiguration(
                port: 0, dataDirectory: bizDirectory.path, accessKey: "dev-access-key", secretKey: "dev-secret-key",
                upHosts: ["http://127.0.0.1:\(upPort)"],
                clients: [.init(id: "demo", apiKeySHA256: BizServerConfiguration.apiKeyHash("dev-api-key"), bucket: "demo",
                                keyPrefix: "demo/")],
                threads: 2),
            store: store, logger: Logger(label: "biz-server", sink: logs))
        let bizPort = try biz.start()
        return Chain(
            directory: directory, up: up, biz: biz, store: store, bizURL: "http://127.0.0.1:\(bizPort)",
            upURL: "http://127.0.0.1:\(upPort)", binary: binary)
    }

    /// Starts the servers, runs `body`, stops them and removes the work directory whatever happened.
    static func run(_ body: (Chain) async throws -> Void) async throws {
        let chain = try await start()
        let result = await Result { try await body(chain) }
        await chain.up.shutdown()
        await chain.biz.shutdown()
        try? FileManager.default.removeItem(at: chain.directory)
        try result.get()
    }

    /// A deterministic file of `size` bytes.
    func makeFile(named name: String, size: Int, seed: UInt64) throws -> String {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var bytes = [UInt8](repeating: 0, count: size)
        for index in bytes.indices {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            bytes[index] = UInt8(truncatingIfNeeded: state)
        }
        let path = directory.appending(path: name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The same `put` command line every run (v1, 2 blocks in flight, 512 KiB chunks, 8 MiB/s so a
    /// kill lands mid-upload).
    func putArguments(file: String, key: String) -> [String] {
        [
            "put", file, "--key", key, "--biz", bizURL, "--api-key", "dev-api-key", "--checkpoint", checkpoint,
            "--protocol", "v1", "--concurrency", "2", "--chunk-size", "512K", "--limit-rate", "8M", "--json",
        ]
    }

    func launch(_ arguments: [String], output name: String) throws -> CLIProcess {
        try CLIProcess(binary: binary, arguments: arguments, stdout: directory.appending(path: name).path,
                       stderr: directory.appending(path: name + ".err").path)
    }
}

/// One `up-cli` process with its output in files.
final class CLIProcess {
    let process: Process
    let stdoutPath: String
    let stderrPath: String

    init(binary: String, arguments: [String], stdout: String, stderr: String) throws {
        stdoutPath = stdout
        stderrPath = stderr
        _ = FileManager.default.createFile(atPath: stdout, contents: nil)
        _ = FileManager.default.createFile(atPath: stderr, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["UPGATE_API_KEY"] = nil
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdout))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderr))
        try process.run()
        self.process = process
    }

    func output() -> String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    func errors() -> String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// The JSON events written so far.
    func events() -> [JSONValue] {
        output().split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
    }

    func event(_ name: String) -> JSONValue? { events().last { $0["event"]?.stringValue == name } }
    func startEvent() -> JSONValue? { event("start") }

    /// Waits until a progress event reports at least `bytes`; false if the process ended first.
    func waitForProgress(atLeast bytes: Int64, timeout: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let sent = events().filter { $0["event"]?.stringValue == "progress" }.compactMap { $0["bytesSent"]?.int64Value }.max()
            if let sent, sent >= bytes { return true }
            if !process.isRunning { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    func kill(_ signal: Int32) { _ = Glibc.kill(process.processIdentifier, signal) }

    /// The exit status, or nil when a signal ended the process.
    func exitStatus() async -> Int32? {
        while process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
        return process.terminationReason == .exit ? process.terminationStatus : nil
    }
}
