import Foundation
import Testing
import UpCore

/// `up-cli put` never finishes an upload whose file changed under it (issue 10, item 3): a file
/// overwritten in the middle or grown while it is being sent ends with exit 4, the checkpoint
/// gone, nothing stored under the key at up-server (`/stat` 612) and no record at biz-server —
/// for form, v1 and v2. And a failed app callback (579) is "stored", not "failed" (item 7).
@Suite("up-cli as a process: integrity", .serialized)
struct UpCliIntegrityTests {
    /// (protocol, grow): the file changes once the upload is under way.
    static let cases: [(String, Bool)] = [("form", false), ("form", true), ("v1", false), ("v1", true), ("v2", false), ("v2", true)]

    @Test(arguments: cases.indices)
    func aFileChangedMidUploadIsNeverCompleted(_ index: Int) async throws {
        let (choice, grow) = Self.cases[index]
        try await Chain.run { chain in
            // Each upload takes ~3-4 s at the rate given, so the edit lands mid-upload.
            let size = choice == "form" ? 1 << 20 : (3 << 20) + 5
            let file = try chain.makeFile(named: "changing-\(choice).bin", size: size, seed: UInt64(index + 20))
            let key = "demo/changing-\(choice)-\(grow).bin"
            var arguments = [
                "put", file, "--key", key, "--biz", chain.bizURL, "--api-key", "dev-api-key", "--checkpoint", chain.checkpoint,
                "--protocol", choice, "--json", "--limit-rate", choice == "form" ? "256K" : "1M",
            ]
            if choice == "v1" { arguments += ["--chunk-size", "256K", "--concurrency", "2"] }
            if choice == "v2" { arguments += ["--part-size", "1M", "--concurrency", "2"] }
            let run = try chain.launch(arguments, output: "changing.jsonl")
            let reached = try await run.waitForProgress(atLeast: Int64(size / 8), timeout: .seconds(30))
            try Chain.edit(file, grow: grow)
            let status = await run.exitStatus()
            let details = "reached \(reached): " + run.output() + "\n" + run.errors()
            #expect(status == 4, "\(details)")
            #expect(run.errors().contains("the file changed while uploading"), "\(details)")
            #expect(run.event("error")?["kind"]?.stringValue == "file changed", "\(details)")
            #expect(run.event("done") == nil, "\(details)")
            #expect(try await chain.statStatus(key) == 612, "an object is stored under \(key)")
            #expect(try await chain.recordCount(key: key) == 0, "biz-server recorded \(key)")
            #expect(!FileManager.default.fileExists(atPath: chain.checkpoint), "the checkpoint survived")
        }
    }

    /// A token whose callback URL refuses connections: up-server stores the object, answers 579
    /// and keeps the callback in its outbox; up-cli says so, prints the hash and exits 6.
    @Test(arguments: ["form", "v1", "v2"])
    func aFailedCallbackIsReportedAsStored(_ choice: String) async throws {
        try await Chain.run { chain in
            let file = try chain.makeFile(named: "callback-\(choice).bin", size: 5000, seed: 61)
            let key = "demo/callback-\(choice).bin"
            let token = chain.token(scope: "demo:" + key, callbackURL: "http://127.0.0.1:1/callback")
            let run = try chain.launch(
                ["put", file, "--key", key, "--token", token, "--up-host", chain.upURL, "--protocol", choice, "--json",
                 "--no-checkpoint"],
                output: "callback.jsonl")
            let status = await run.exitStatus()
            let details = run.output() + "\n" + run.errors()
            let etag = Etag.of(try Data(contentsOf: URL(fileURLWithPath: file)))
            #expect(status == 6, "\(details)")
            let stored = run.event("stored")
            #expect(stored?["hash"]?.stringValue == etag, "\(details)")
            #expect(stored?["key"]?.stringValue == key, "\(details)")
            #expect(stored?["callbackFailed"] == .bool(true), "\(details)")
            #expect(run.event("error") == nil, "\(details)")
            #expect(run.errors().contains("stored; the app's callback failed and will be retried"), "\(details)")
            #expect(try await chain.statStatus(key) == 200)
        }
    }
}
