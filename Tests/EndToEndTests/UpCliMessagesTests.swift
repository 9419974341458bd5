import Basics
import Foundation
import Synchronization
import Testing
import UpCore

#if canImport(Glibc)
import Glibc
#endif

/// What a user of `up-cli` reads: exit codes, messages, `--version` and help, the progress bar
/// and the JSON events (issue 10, items 10-13).
@Suite("up-cli as a process: messages and progress", .serialized)
struct UpCliMessagesTests {
    // MARK: item 10: exit codes and the default key

    @Test func anUnreachableBizServerIsANetworkFailure() async throws {
        try await Chain.run { chain in
            let file = try chain.makeFile(named: "nobiz.bin", size: 100, seed: 1)
            let run = try chain.launch(
                ["put", file, "--key", "demo/nobiz.bin", "--biz", "http://127.0.0.1:1", "--api-key", "dev-api-key",
                 "--retries", "0", "--json", "--no-checkpoint"],
                output: "nobiz.jsonl")
            let status = await run.exitStatus()
            #expect(status == 1, "\(run.output())\n\(run.errors())")
            #expect(run.event("error")?["kind"]?.stringValue == "network")
            #expect(run.errors().contains("unreachable"))
        }
    }

    @Test func aScope403IsATokenRefusal() async throws {
        try await Chain.run { chain in
            let file = try chain.makeFile(named: "scope.bin", size: 100, seed: 2)
            let run = try chain.launch(
                ["put", file, "--key", "demo/other.bin", "--token", chain.token(scope: "demo:demo/allowed.bin"),
                 "--up-host", chain.upURL, "--json", "--no-checkpoint"],
                output: "scope.jsonl")
            let status = await run.exitStatus()
            #expect(status == 5, "\(run.output())\n\(run.errors())")
        }
    }

    @Test func theKeyDefaultsToTheKeyOfAOneKeyToken() async throws {
        try await Chain.run { chain in
            let file = try chain.makeFile(named: "onekey.bin", size: 100, seed: 3)
            let run = try chain.launch(
                ["put", file, "--token", chain.token(scope: "demo:only/key.bin"), "--up-host", chain.upURL, "--json",
                 "--no-checkpoint"],
                output: "onekey.jsonl")
            let status = await run.exitStatus()
            #expect(status == 0, "\(run.output())\n\(run.errors())")
            #expect(run.event("done")?["key"]?.stringValue == "only/key.bin")
            #expect(run.startEvent()?["key"]?.stringValue == "only/key.bin")
            #expect(try await chain.statStatus("only/key.bin") == 200)
        }
    }

    // MARK: item 11: --version, put's own help

    @Test func versionAndPutHelp() async throws {
        try await Chain.run { chain in
            let version = try chain.launch(["--version"], output: "version.txt")
            #expect(await version.exitStatus() == 0)
            #expect(version.output() == UpgateVersion.line(for: "up-cli") + "\n")
            for flag in ["-h", "--help"] {
                let help = try chain.launch(["put", flag], output: "help\(flag).txt")
                #expect(await help.exitStatus() == 0, "\(flag): \(help.errors())")
                let text = help.output()
                #expect(text.contains("up-cli put FILE"), "\(flag): \(text)")
                #expect(text.contains("--limit-rate"), "\(flag)")
                #expect(!text.contains("up-cli etag FILE"), "\(flag) printed the global help")
                #expect(text.contains("\n  6    stored"), "\(flag): exit status 6 is not documented")
            }
        }
    }

    // MARK: item 12: progress

    /// At 1 MiB/s a 3 MiB chunk takes 3 s: the progress moves while it is sent, not once at its end.
    @Test func progressIsByteLevel() async throws {
        try await Chain.run { chain in
            let size = 3 << 20
            let file = try chain.makeFile(named: "bytes.bin", size: size, seed: 4)
            let run = try chain.launch(
                ["put", file, "--key", "demo/bytes.bin", "--biz", chain.bizURL, "--api-key", "dev-api-key", "--protocol", "v1",
                 "--limit-rate", "1M", "--json", "--no-checkpoint"],
                output: "bytes.jsonl")
            #expect(await run.exitStatus() == 0, "\(run.errors())")
            let values = Set(run.events().filter { $0["event"]?.stringValue == "progress" }.compactMap { $0["bytesSent"]?.int64Value })
            let between = values.filter { $0 > 0 && $0 < Int64(size) }
            #expect(between.count >= 5, "progress values: \(values.sorted())")
        }
    }

    @Test(arguments: [50, 70])
    func theBarFitsTheTerminal(_ columns: Int) async throws {
        try await Chain.run { chain in
            let file = try chain.makeFile(named: "bar.bin", size: 3 << 20, seed: 5)
            let (status, output) = try await chain.runOnTerminal(
                ["put", file, "--key", "demo/bar-\(columns).bin", "--biz", chain.bizURL, "--api-key", "dev-api-key",
                 "--protocol", "v1", "--chunk-size", "256K", "--limit-rate", "2M", "--no-checkpoint"],
                columns: columns, name: "bar-\(columns).txt")
            #expect(status == 0, "\(output)")
            let bars = Chain.barLines(output)
            #expect(bars.count >= 3, "\(output.debugDescription)")
            for bar in bars { #expect(bar.count < columns, "\(bar.count) characters at \(columns) columns: \(bar)") }
            #expect(bars.last?.contains("100%") == true, "\(bars)")
        }
    }

    @Test func anEmptyFileEndsAtOneHundredPercentWithoutASpeed() async throws {
        try await Chain.run { chain in
            let file = try chain.makeFile(named: "empty.bin", size: 0, seed: 6)
            let (status, output) = try await chain.runOnTerminal(
                ["put", file, "--key", "demo/empty.bin", "--biz", chain.bizURL, "--api-key", "dev-api-key", "--no-checkpoint"],
                columns: 80, name: "empty.txt")
            #expect(status == 0, "\(output)")
            let last = try #require(Chain.barLines(output).last, "no bar drawn: \(output.debugDescription)")
            #expect(last.contains("100%"), "\(last)")
            #expect(!last.contains("/s"), "\(last)")
        }
    }

    /// The `start` event names the up hosts the upload really uses (here: the ones biz-server hands
    /// out with the token), and `bytesSent` counts the file's bytes, not the request envelopes.
    @Test func theStartEventListsTheHostsUsedAndBytesSentCountsPayload() async throws {
        try await Chain.run { chain in
            for (name, size, choice) in [("small.bin", 5, "auto"), ("v1.bin", (5 << 20) + 3, "v1"), ("v2.bin", (5 << 20) + 3, "v2")] {
                let file = try chain.makeFile(named: name, size: size, seed: 7)
                let run = try chain.launch(
                    ["put", file, "--key", "demo/" + name, "--biz", chain.bizURL, "--api-key", "dev-api-key", "--protocol", choice,
                     "--json", "--no-checkpoint"],
                    output: name + ".jsonl")
                #expect(await run.exitStatus() == 0, "\(run.errors())")
                #expect(run.startEvent()?["upHosts"] == .array([.string(chain.upURL)]), "\(run.output())")
                #expect(run.event("done")?["bytesSent"]?.int64Value == Int64(size), "\(name): \(run.output())")
            }
        }
    }

    // MARK: item 13: --limit-rate for form, the checkpoint lock, a discarded checkpoint

    @Test func limitRateHoldsForAFormUpload() async throws {
        try await Chain.run { chain in
            let file = try chain.makeFile(named: "slowform.bin", size: 1 << 20, seed: 8)
            let started = ContinuousClock.now
            let run = try chain.launch(
                ["put", file, "--key", "demo/slowform.bin", "--biz", chain.bizURL, "--api-key", "dev-api-key",
                 "--limit-rate", "256K", "--json", "--no-checkpoint"],
                output: "slowform.jsonl")
            #expect(await run.exitStatus() == 0, "\(run.errors())")
            let elapsed = ContinuousClock.now - started
            // 1 MiB at 256 KiB/s is 4 s; allow for rounding in the pacing, never for no pacing at all.
            #expect(elapsed >= .milliseconds(3500), "a 1 MiB form upload at 256K/s took \(elapsed)")
        }
    }

    @Test func aLockThatCannotBeCreatedSaysWhy() async throws {
        try await Chain.run { chain in
            let file = try chain.makeFile(named: "lock.bin", size: 5 << 20, seed: 9)
            // sysfs refuses new files even to root: creating the lock fails with EACCES.
            let run = try chain.launch(
                ["put", file, "--key", "demo/lock.bin", "--biz", chain.bizURL, "--api-key", "dev-api-key",
                 "--checkpoint", "/sys/upgate-test-\(UUID().uuidString).json", "--json"],
                output: "lock.jsonl")
            let status = await run.exitStatus()
            #expect(status == 4, "\(run.output())\n\(run.errors())")
            #expect(run.errors().contains("permission denied"), "\(run.errors())")
            #expect(!run.errors().contains("in use by another upload"), "\(run.errors())")
        }
    }

    /// Paused once (the pause says how much the checkpoint holds), the file edited, run again: the
    /// checkpoint is discarded and the run says so once, before it uploads anything.
    @Test func aCheckpointDiscardedBecauseTheFileChangedIsReportedOnceBeforeUploading() async throws {
        try await Chain.run { chain in
            let size = 6 << 20
            let file = try chain.makeFile(named: "discard.bin", size: size, seed: 10)
            let arguments = [
                "put", file, "--key", "demo/discard.bin", "--biz", chain.bizURL, "--api-key", "dev-api-key", "--checkpoint",
                chain.checkpoint, "--protocol", "v1", "--chunk-size", "512K", "--limit-rate", "4M", "--json",
            ]
            let first = try chain.launch(arguments, output: "discard1.jsonl")
            try #require(try await first.waitForProgress(atLeast: Int64(size / 3), timeout: .seconds(30)), "\(first.output())")
            first.kill(SIGINT)
            #expect(await first.exitStatus() == 130, "\(first.errors())")
            #expect(first.errors().contains("saved "), "the pause does not say what the checkpoint holds: \(first.errors())")
            let paused = try #require(first.event("paused"))
            #expect((paused["savedBytes"]?.int64Value ?? 0) > 0, "\(paused)")
            #expect(paused["totalBytes"]?.int64Value == Int64(size))

            try Chain.edit(file, grow: false)
            let second = try chain.launch(arguments, output: "discard2.jsonl")
            #expect(await second.exitStatus() == 0, "\(second.errors())")
            let errors = second.errors()
            #expect(errors.components(separatedBy: "checkpoint not used").count == 2, "said \(errors.debugDescription)")
            #expect(!errors.contains("resuming"), "\(errors)")
            let start = try #require(second.events().first)
            #expect(start["event"]?.stringValue == "start")
            #expect(start["checkpointNote"]?.stringValue?.contains("file") == true, "\(start)")
            #expect(second.event("done")?["resumed"] == .bool(false))
        }
    }
}
