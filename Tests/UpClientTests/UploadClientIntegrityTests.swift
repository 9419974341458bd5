import Foundation
import HTTPTransport
import NativeCrypto
import Synchronization
import Testing
import UpCore
@testable import UpClient

/// The rule of issue 10 item 3 in the library: an upload whose file changes under it is never
/// completed, fails with ``UploadError/Kind/fileChanged`` and leaves no checkpoint; and what the
/// client reports (the hash, `bytesSent`, 579, refused tokens) describes the bytes it sent. Against
/// ``UploadClientTests/FakeUpHost``, which stores what it receives.
@Suite struct UploadClientIntegrityTests {
    typealias Host = UploadClientTests.FakeUpHost

    static func client(_ transport: any HTTPTransport) -> UploadClient {
        UploadClientTests.client(transport)
    }

    static func checkpointPath() -> String {
        FileManager.default.temporaryDirectory.appending(path: "upclient-ckpt-\(UUID().uuidString).json").path
    }

    /// Overwrites 1000 bytes at `offset`, or appends them with `grow`.
    static func edit(_ path: String, at offset: UInt64, grow: Bool) {
        guard let handle = FileHandle(forWritingAtPath: path) else { return }
        defer { try? handle.close() }
        if grow { _ = try? handle.seekToEnd() } else { try? handle.seek(toOffset: offset) }
        try? handle.write(contentsOf: Data(repeating: 0xEE, count: 1000))
    }

    @Test(arguments: [false, true])
    func aFileChangedMidUploadIsNeverCompleted(_ grow: Bool) async throws {
        let (path, _) = try UploadClientTests.fixture(size: 3 << 20)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let checkpoint = Self.checkpointPath()
        // The second chunk request changes the file (a chunk not yet read, so it is sent changed).
        let host = Host { _, n in
            if n == 1 { Self.edit(path, at: (2 << 20) + 10, grow: grow) }
            return nil
        }
        let outcome = await Result { () async throws(UploadError) -> UploadResult in
            try await Self.client(host).upload(UploadRequest(filePath: path, key: "k", token: UploadClientTests.token, checkpointPath: checkpoint))
        }
        guard case .failure(let error) = outcome else { Issue.record("the changed file was uploaded"); return }
        #expect(error.kind == .fileChanged, "\(error)")
        #expect(error.message.contains("the file changed while uploading"), "\(error)")
        #expect(!host.requests.contains { $0.url.contains("/mkfile/") }, "mkfile was sent: \(host.requests.map(\.url))")
        #expect(!FileManager.default.fileExists(atPath: checkpoint))
    }

    /// Half of block 0 sent, then paused; the file edited past its first MiB and its mtime put back
    /// (size, mtime, inode and the head/tail fingerprint all still match): the resume reads the
    /// half-sent bytes back, finds they are not the ones sent, and refuses to go on.
    @Test func aResumeRefusesAHalfSentBlockWhoseBytesChanged() async throws {
        let (path, _) = try UploadClientTests.fixture(size: 6 << 20)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let checkpoint = Self.checkpointPath()
        defer { try? FileManager.default.removeItem(atPath: checkpoint) }
        let control = UploadControl()
        let host = Host { _, n in
            if n == 2 { control.pause() }
            return nil
        }
        let request = UploadRequest(filePath: path, key: "k", token: UploadClientTests.token, checkpointPath: checkpoint)
        let first = await Result { () async throws(UploadError) -> UploadResult in
            try await Self.client(host).upload(request, control: control)
        }
        guard case .failure(let paused) = first, paused.kind == .paused else { Issue.record("not paused: \(first)"); return }
        #expect(paused.savedBytes == 3 << 20, "the checkpoint holds \(String(describing: paused.savedBytes))")

        let mtime = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        Self.edit(path, at: (1 << 20) + 500, grow: false)
        try FileManager.default.setAttributes([.modificationDate: mtime as Any], ofItemAtPath: path)
        let second = await Result { () async throws(UploadError) -> UploadResult in
            try await Self.client(host).upload(request, control: control)
        }
        guard case .failure(let error) = second else { Issue.record("resumed over changed bytes"); return }
        #expect(error.kind == .fileChanged, "\(error)")
        #expect(!host.requests.contains { $0.url.contains("/mkfile/") })
        #expect(!FileManager.default.fileExists(atPath: checkpoint))
    }

    /// Resumed after a pause mid-block, the upload's hash is the etag of the file: the half-sent
    /// block's hash goes on from the bytes read back, the finished blocks' from the checkpoint.
    @Test func aResumedUploadHashesEveryByteOnce() async throws {
        let (path, bytes) = try UploadClientTests.fixture(size: (9 << 20) + 123)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let checkpoint = Self.checkpointPath()
        let control = UploadControl()
        let host = Host { _, n in
            if n == 5 { control.pause() }
            return nil
        }
        let request = UploadRequest(filePath: path, key: "k", token: UploadClientTests.token, checkpointPath: checkpoint)
        let first = await Result { () async throws(UploadError) -> UploadResult in
            try await Self.client(host).upload(request, control: control)
        }
        guard case .failure(let paused) = first, paused.kind == .paused else { Issue.record("not paused"); return }
        let result = try await Self.client(host).upload(request, control: control)
        #expect(result.resumed)
        #expect(result.hash == Etag.of(bytes))
        #expect(result.bytesSent == Int64(bytes.count) - (6 << 20), "sent \(result.bytesSent)")
    }

    @Test func bytesSentCountsTheFileOnly() async throws {
        let (path, bytes) = try UploadClientTests.fixture(size: (2 << 20) + 7)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await Self.client(Host()).upload(UploadRequest(filePath: path, key: "k", token: UploadClientTests.token))
        #expect(result.bytesSent == Int64(bytes.count))
        #expect(result.hash == Etag.of(bytes))
    }

    @Test func a579AtMkfileIsStoredNotFailed() async throws {
        let (path, bytes) = try UploadClientTests.fixture(size: 5000)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let checkpoint = Self.checkpointPath()
        let host = Host { request, _ in
            request.url.contains("/mkfile/") ? UploadClientTests.json("{\"error\":\"callback failed\"}", status: 579) : nil
        }
        let outcome = await Result { () async throws(UploadError) -> UploadResult in
            try await Self.client(host).upload(UploadRequest(filePath: path, key: "k", token: UploadClientTests.token, checkpointPath: checkpoint))
        }
        guard case .failure(let error) = outcome else { Issue.record("no error"); return }
        #expect(error.kind == .callbackFailed)
        #expect(error.result?.hash == Etag.of(bytes))
        #expect(error.result?.key == "k")
        #expect(error.requestID == "r1")
        #expect(host.requests.count { $0.url.contains("/mkfile/") } == 1, "mkfile was retried")
        #expect(!FileManager.default.fileExists(atPath: checkpoint))
    }

    @Test(arguments: [(401, "bad token"), (403, "key doesn't match with scope")])
    func aRefusedTokenIsATokenError(_ row: (Int, String)) async throws {
        let (path, _) = try UploadClientTests.fixture(size: 100)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let host = Host { _, _ in UploadClientTests.json("{\"error\":\"\(row.1)\"}", status: row.0) }
        let outcome = await Result { () async throws(UploadError) -> UploadResult in
            try await Self.client(host).upload(UploadRequest(filePath: path, key: "k", token: UploadClientTests.token))
        }
        guard case .failure(let error) = outcome else { Issue.record("no error"); return }
        #expect(error.kind == .token, "\(error)")
        #expect(error.message.contains(row.1))
    }

    @Test func anotherForbiddenStaysAServerError() async throws {
        let (path, _) = try UploadClientTests.fixture(size: 100)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let host = Host { _, _ in UploadClientTests.json("{\"error\":\"limited mimeType\"}", status: 403) }
        let outcome = await Result { () async throws(UploadError) -> UploadResult in
            try await Self.client(host).upload(UploadRequest(filePath: path, key: "k", token: UploadClientTests.token))
        }
        guard case .failure(let error) = outcome else { Issue.record("no error"); return }
        #expect(error.kind == .server(status: 403))
    }
}

extension Result where Failure == UploadError {
    /// Captures the outcome of an async call with typed throws.
    init(_ body: () async throws(UploadError) -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
