import Basics
import Foundation
import HTTPKit
import HTTPTransport
import Testing
import TestSupport
@testable import UpServer

/// Downloads that are not one disk blob stream from the store (`ObjectDownload`,
/// `SegmentReader`): from S3 (SeaweedFS) over a live up-server, whole, ranges across segments and
/// chunk objects, and `HEAD`, byte-exact, with nothing staged on the local disk; and what a
/// missing blob does before and after the head.
@Suite("downloads stream")
struct ObjectDownloadTests {
    @Test func anS3DownloadAndItsRangesStreamByteExact() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try await s3BlockStore(directory)
        let index = InMemoryUpIndex()
        let server = UpServer(
            configuration: UpServerConfiguration(
                port: 0, keys: ["ak": "sk"], buckets: ["demo"], publicBuckets: ["demo"],
                contextSecret: "test-context-secret-0123456789", threads: 2),
            stores: UpStores(blobs: store, index: index, outbox: index.outbox), callbacks: ScriptedCallbacks(),
            contextSecret: Array("test-context-secret-0123456789".utf8), clock: SystemClock(),
            logger: Logger(label: "up-test", sink: .memory()), metrics: Metrics())
        // Three blobs (3 MiB, 2 MiB + 17, 1 MiB - 5), each appended in pieces: several chunk objects.
        var source = ByteSource(seed: 11)
        let parts = [source.next(3 << 20), source.next((2 << 20) + 17), source.next((1 << 20) - 5)]
        let segments = try await BlockingIO.run {
            try parts.map { part in
                let blob = try store.create()
                var offset = 0
                while offset < part.count {
                    let end = min(part.count, offset + (1 << 20) + 333)
                    _ = try store.append(Array(part[offset..<end]), to: blob, at: Int64(offset))
                    offset = end
                }
                return Segment(blob: blob, length: Int64(part.count))
            }
        }
        let whole = parts.flatMap { $0 }
        let object = StoredObject(
            bucket: "demo", key: "big.bin", etag: "Ebig", fsize: Int64(whole.count), mimeType: "application/x-test",
            segments: segments, putTime: 1_900_000_000)
        _ = try await index.putObject(object, mode: .replace, completion: nil, callback: nil)
        let port = try server.start()
        do {
            try await Self.check(port: port, whole: whole)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    /// The first piece is read before the head: a blob missing at the start is still a status
    /// (599); one missing later can only fail the stream, which the server turns into a cut
    /// connection, logged as an error. `HEAD` reads nothing.
    @Test func aMissingBlobIsAStatusAtTheStartAndAFailedStreamLater() async throws {
        let harness = UpServerHarness { $0.publicBuckets = ["demo"] }
        let controller = ManagementControllerTests()
        var bytes = ByteSource(seed: 3)
        let first = bytes.next((1 << 20) + 10), second = bytes.next(1 << 20)
        try await controller.put(harness, key: "k", pieces: [first, second])
        let blobs = try #require(await harness.index.object(bucket: "demo", key: "k")).segments.map(\.blob)

        let streamed = await harness.send(.get, "/dl/demo/k")
        #expect(streamed.status == 200)
        guard case .stream(let length, let source) = streamed.body else { Issue.record("not streamed"); return }
        #expect(length == UInt64(first.count + second.count))
        try harness.store.remove(blobs[1])
        var received: [UInt8] = []
        await #expect(throws: BlockStoreError.self) {
            while let piece = try await source.next() { received += piece }
        }
        #expect(received == first)  // every byte up to the missing blob
        // The access-log line said 200 when the head went out; the cut is logged on its own.
        let cut = harness.logs.capturedLines.filter { $0.contains("download cut short") }
        #expect(cut.count == 1)
        #expect(cut.first?.contains(#""level":"error""#) == true)
        #expect(cut.first?.contains(blobs[1].hex) == true)

        try harness.store.remove(blobs[0])
        #expect(await harness.send(.get, "/dl/demo/k").status == 599)
        #expect(await harness.send(.head, "/dl/demo/k").status == 200)  // never pulled, so never failed
    }

    static func check(port: Int, whole: [UInt8]) async throws {
        let transport = try CurlTransport()
        let url = "http://127.0.0.1:\(port)/dl/demo/big.bin"

        let full = try await transport.send(TransportRequest(method: "GET", url: url, maxResponseBytes: 16 << 20))
        #expect(full.status == 200)
        #expect(full[header: "Content-Length"] == "\(whole.count)")
        #expect(full.body.count == whole.count)
        #expect(full.body == whole)

        // Across all three blobs (streamed), inside one chunk object (in memory), the last byte.
        let size = whole.count
        for (first, last) in [(1000, size - 1000), ((3 << 20) - 10, (3 << 20) + 9), (size - 1, size - 1)] {
            let ranged = try await transport.send(TransportRequest(
                method: "GET", url: url, headers: [("Range", "bytes=\(first)-\(last)")], maxResponseBytes: 16 << 20))
            #expect(ranged.status == 206, "\(first)-\(last)")
            #expect(ranged[header: "Content-Range"] == "bytes \(first)-\(last)/\(size)")
            #expect(ranged.body == Array(whole[first...last]), "\(first)-\(last)")
        }

        let head = try await transport.send(TransportRequest(method: "HEAD", url: url))
        #expect(head.status == 200 && head[header: "Content-Length"] == "\(whole.count)" && head.body.isEmpty)
    }
}
