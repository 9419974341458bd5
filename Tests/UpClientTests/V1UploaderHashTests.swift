import Foundation
import HTTPTransport
import Testing
import UpCore
@testable import UpClient

/// With the default 4 MiB chunks every chunk is a whole block, and the block's SHA-1 is computed
/// with its CRC-32 in the one pass before sending, kept only once the reply accepts the chunk
/// (issue 14). The local etag must still be the etag of the bytes: the oracle is `Etag.of` over
/// the file's bytes, and the fake host answers mkfile with the etag of what it stored, which the
/// client checks against its own (a differing hash is an integrity error, not a result).
@Suite struct V1UploaderHashTests {
    typealias Host = UploadClientTests.FakeUpHost

    static func client(_ transport: any HTTPTransport) -> UploadClient {
        var configuration = UploadClient.Configuration(upHosts: ["http://a"])
        configuration.protocolChoice = .v1
        configuration.concurrency = 1
        configuration.retryBaseDelay = .milliseconds(1)
        return UploadClient(configuration: configuration, transport: transport)
    }

    /// The second block's first reply carries a wrong crc32: that send's SHA-1 is dropped and
    /// the block goes again.
    @Test func wholeBlockChunksGiveTheEtagOfTheBytes() async throws {
        let (path, bytes) = try UploadClientTests.fixture(size: (9 << 20) + 123)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let host = Host { _, n in
            n == 1 ? UploadClientTests.json("{\"ctx\":\"bad\",\"crc32\":1,\"offset\":4194304}") : nil
        }
        let result = try await Self.client(host).upload(UploadRequest(filePath: path, key: "k", token: UploadClientTests.token))
        #expect(result.hash == Etag.of(bytes))
        #expect(host.requests.map(\.url).filter { $0.contains("/mkblk/") }.count == 4)  // 3 blocks, one twice
    }

    /// Paused after two whole blocks: the resumed upload sends only the third, and its etag still
    /// covers the two sent before (their SHA-1s come from the checkpoint).
    @Test func aResumeAfterWholeBlocksKnowsTheirHashes() async throws {
        let (path, bytes) = try UploadClientTests.fixture(size: (9 << 20) + 123)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let checkpoint = UploadClientIntegrityTests.checkpointPath()
        defer { try? FileManager.default.removeItem(atPath: checkpoint) }
        let control = UploadControl()
        let host = Host { _, n in
            if n == 1 { control.pause() }
            return nil
        }
        let request = UploadRequest(filePath: path, key: "k", token: UploadClientTests.token, checkpointPath: checkpoint)
        let first = await Result { () async throws(UploadError) -> UploadResult in
            try await Self.client(host).upload(request, control: control)
        }
        guard case .failure(let paused) = first, paused.kind == .paused else { Issue.record("not paused: \(first)"); return }
        #expect(paused.savedBytes == 8 << 20)
        let result = try await Self.client(host).upload(request, control: control)
        #expect(result.resumed)
        #expect(result.hash == Etag.of(bytes))
        #expect(result.bytesSent == (1 << 20) + 123)
    }
}
