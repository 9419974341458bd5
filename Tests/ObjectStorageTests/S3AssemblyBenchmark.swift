import Foundation
import HTTPTransport
import NativeCrypto
import ObjectStorage
import Testing
import TestSupport

/// How to turn 4 MiB Qiniu blocks into one downloadable object on an S3 store (issue 12 §2):
/// figures for the design decision, not a test. Skipped unless `UPGATE_BENCH` is set; run with
/// `scripts/bench/s3-assembly` (release build, a private SeaweedFS).
///
/// Every strategy stores the same 256 MiB as 64 block objects first (4 uploads in flight, each
/// streamed, as up-server would relay mkblk bodies), then assembles and downloads it, and checks
/// the downloaded SHA-256. "written" is how much weed's volume files grew; "relayed" is what
/// passed through us (uploaded plus downloaded by the assembling node, final download excluded).
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["UPGATE_BENCH"] != nil))
struct S3AssemblyBenchmark {
    static let mib = 1 << 20
    static let objectSize = (Int(ProcessInfo.processInfo.environment["UPGATE_BENCH_MIB"] ?? "") ?? 256) << 20
    /// Random bytes: SeaweedFS compresses compressible uploads, which would hide what is written.
    static let data = SecureRandom.bytes(objectSize)

    /// `range` of ``data`` as a streamed body in 64 KiB pieces.
    static func body(_ range: Range<Int>) -> S3Client.Body {
        let pieces = AsyncThrowingStream<[UInt8], any Error> { continuation in
            var offset = range.lowerBound
            while offset < range.upperBound {
                let end = min(range.upperBound, offset + (64 << 10))
                continuation.yield(Array(data[offset..<end]))
                offset = end
            }
            continuation.finish()
        }
        return .stream(StreamedRequestBody(length: Int64(range.count), pieces: pieces))
    }

    struct Run {
        var upload = 0.0, assemble = 0.0, download = 0.0
        var written: Int64 = 0
        var relayed: Int64 = 0
        var requests = 0
    }

    static func seconds(_ start: ContinuousClock.Instant) -> Double {
        let d = ContinuousClock.now - start
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static func report(_ name: String, _ run: Run, note: String = "") {
        let total = Double(objectSize) / Double(mib)
        print(String(
            format: "BENCH %@: upload %.2f s, assemble %.2f s, download %.2f s (%.0f MiB/s); written %.0f MiB (%.2fx), relayed %.0f MiB, %d requests%@",
            name, run.upload, run.assemble, run.download, total / max(run.download, 0.001), Double(run.written) / Double(mib),
            Double(run.written) / Double(objectSize), Double(run.relayed) / Double(mib), run.requests, note.isEmpty ? "" : "; " + note))
    }

    /// Stores `count` objects of `size` bytes named `prefix<i>`, `parallel` at a time.
    static func putAll(_ client: S3Client, prefix: String, size: Int, count: Int, parallel: Int = 4) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                if index >= parallel { try await group.next() }
                group.addTask {
                    let offset = index * size
                    _ = try await client.putObject("\(prefix)\(index)", body: Self.body(offset..<(offset + size)))
                }
            }
            try await group.waitForAll()
        }
    }

    /// Reads the objects in order, `ahead` requests in flight, and returns the SHA-256 of it all.
    /// With one in flight each object streams straight through; with more, the ones ahead are
    /// buffered (4 MiB each) until their turn.
    static func readInOrder(_ client: S3Client, keys: [String], ahead: Int) async throws -> String {
        var digest = Digest(.sha256)
        if ahead == 1 {
            for key in keys {
                for try await piece in try await client.getObject(key).body { digest.update(piece) }
            }
            return Hex.encode(digest.finalize())
        }
        var pending: [Task<[UInt8], any Error>] = []
        var next = 0
        while next < keys.count || !pending.isEmpty {
            while pending.count < ahead && next < keys.count {
                let key = keys[next]
                pending.append(Task { try await client.getObject(key).body.collect(upTo: 64 << 20) })
                next += 1
            }
            digest.update(try await pending.removeFirst().value)
        }
        return Hex.encode(digest.finalize())
    }

    static func streamHash(_ client: S3Client, key: String) async throws -> String {
        var digest = Digest(.sha256)
        for try await piece in try await client.getObject(key).body { digest.update(piece) }
        return Hex.encode(digest.finalize())
    }

    @Test func assemblyStrategies() async throws {
        let store = try await SeaweedFS.start()
        defer { Task { await store.stop() } }
        let block = 4 * Self.mib, blocks = Self.objectSize / block
        let expected = Hex.encode(SHA256.hash(Self.data))
        print("BENCH SeaweedFS weed RSS after start: \(store.residentKiB() ?? 0) KiB; object \(Self.objectSize / Self.mib) MiB = \(blocks) x 4 MiB blocks")

        // (a) Manifest: the block objects are the object; download reads them in order.
        do {
            let client = try await freshClient(store)
            var run = Run()
            let before = store.storedBytes(bucket: client.settings.bucket)
            var start = ContinuousClock.now
            try await Self.putAll(client, prefix: "blk/", size: block, count: blocks)
            run.upload = Self.seconds(start)
            run.written = store.storedBytes(bucket: client.settings.bucket) - before
            run.relayed = Int64(Self.objectSize)
            run.requests = blocks
            let keys = (0..<blocks).map { "blk/\($0)" }
            for ahead in [1, 2, 4] {
                start = ContinuousClock.now
                let hash = try await Self.readInOrder(client, keys: keys, ahead: ahead)
                run.download = Self.seconds(start)
                #expect(hash == expected)
                Self.report("(a) manifest of \(blocks) block objects, \(ahead) GET in flight", run)
            }
            print("BENCH weed RSS now: \(store.residentKiB() ?? 0) KiB")
        }

        // (a') v1 chunks as their own objects: 1 MiB bput chunks, a block is a manifest of chunks.
        do {
            let client = try await freshClient(store)
            var run = Run()
            let chunk = Self.mib, chunks = Self.objectSize / chunk
            let before = store.storedBytes(bucket: client.settings.bucket)
            var start = ContinuousClock.now
            try await Self.putAll(client, prefix: "chk/", size: chunk, count: chunks)
            run.upload = Self.seconds(start)
            run.written = store.storedBytes(bucket: client.settings.bucket) - before
            run.relayed = Int64(Self.objectSize)
            run.requests = chunks
            start = ContinuousClock.now
            #expect(try await Self.readInOrder(client, keys: (0..<chunks).map { "chk/\($0)" }, ahead: 4) == expected)
            run.download = Self.seconds(start)
            Self.report("(a') manifest of \(chunks) 1 MiB chunk objects, 4 GET in flight", run)
        }

        // (b0) UploadPartCopy straight from the 4 MiB block objects: S3 refuses parts under 5 MiB.
        do {
            let client = try await freshClient(store)
            try await Self.putAll(client, prefix: "blk/", size: block, count: 2)
            let upload = try await client.createMultipartUpload("obj")
            var parts: [S3CompletedPart] = []
            for index in 0..<2 {
                parts.append(S3CompletedPart(number: index + 1, etag: try await client.uploadPartCopy(
                    "obj", uploadId: upload, number: index + 1, source: "blk/\(index)")))
            }
            let error = await s3Error { _ = try await client.completeMultipartUpload("obj", uploadId: upload, parts: parts) }
            print("BENCH (b0) UploadPartCopy of 4 MiB block objects: complete -> \(error.map { "\($0.kind) \($0.code ?? "")" } ?? "accepted")")
            try? await client.abortMultipartUpload("obj", uploadId: upload)
        }

        // (b1) Re-upload pairs: GET two block objects, PUT them as one 8 MiB part (streamed
        // through the assembling node), complete, delete the blocks.
        do {
            let client = try await freshClient(store)
            var run = Run()
            let before = store.storedBytes(bucket: client.settings.bucket)
            var start = ContinuousClock.now
            try await Self.putAll(client, prefix: "blk/", size: block, count: blocks)
            run.upload = Self.seconds(start)
            start = ContinuousClock.now
            let upload = try await client.createMultipartUpload("obj")
            let parts = try await withThrowingTaskGroup(of: S3CompletedPart.self) { group in
                var parts: [S3CompletedPart] = []
                for pair in 0..<(blocks / 2) {
                    if pair >= 4, let done = try await group.next() { parts.append(done) }
                    group.addTask {
                        let first = try await client.getObject("blk/\(2 * pair)").body
                        let second = try await client.getObject("blk/\(2 * pair + 1)").body
                        let pieces = AsyncThrowingStream<[UInt8], any Error> { continuation in
                            let feeder = Task {
                                do {
                                    for try await piece in first { continuation.yield(piece) }
                                    for try await piece in second { continuation.yield(piece) }
                                    continuation.finish()
                                } catch { continuation.finish(throwing: error) }
                            }
                            continuation.onTermination = { _ in feeder.cancel() }
                        }
                        let etag = try await client.uploadPart(
                            "obj", uploadId: upload, number: pair + 1,
                            body: .stream(StreamedRequestBody(length: Int64(2 * block), pieces: pieces)))
                        return S3CompletedPart(number: pair + 1, etag: etag)
                    }
                }
                for try await done in group { parts.append(done) }
                return parts.sorted { $0.number < $1.number }
            }
            _ = try await client.completeMultipartUpload("obj", uploadId: upload, parts: parts)
            run.written = store.storedBytes(bucket: client.settings.bucket) - before
            _ = try await client.deleteObjects((0..<blocks).map { "blk/\($0)" })
            run.assemble = Self.seconds(start)
            run.relayed = 3 * Int64(Self.objectSize)
            run.requests = blocks + 1 + blocks + blocks / 2 + 2
            start = ContinuousClock.now
            #expect(try await Self.streamHash(client, key: "obj") == expected)
            run.download = Self.seconds(start)
            Self.report("(b1) re-upload pairs as 8 MiB parts (GET+GET->UploadPart), complete, delete blocks", run)
        }

        // (b2) UploadPartCopy where it is allowed: block pairs stored as 8 MiB objects (what a
        // client sending 8 MiB blocks, or a v2 part of >= 5 MiB, would give), copied server-side.
        do {
            let client = try await freshClient(store)
            var run = Run()
            let before = store.storedBytes(bucket: client.settings.bucket)
            var start = ContinuousClock.now
            try await Self.putAll(client, prefix: "pair/", size: 2 * block, count: blocks / 2)
            run.upload = Self.seconds(start)
            start = ContinuousClock.now
            let upload = try await client.createMultipartUpload("obj")
            var parts: [S3CompletedPart] = []
            for pair in 0..<(blocks / 2) {
                parts.append(S3CompletedPart(number: pair + 1, etag: try await client.uploadPartCopy(
                    "obj", uploadId: upload, number: pair + 1, source: "pair/\(pair)")))
            }
            _ = try await client.completeMultipartUpload("obj", uploadId: upload, parts: parts)
            run.written = store.storedBytes(bucket: client.settings.bucket) - before
            _ = try await client.deleteObjects((0..<(blocks / 2)).map { "pair/\($0)" })
            run.assemble = Self.seconds(start)
            run.relayed = Int64(Self.objectSize)
            run.requests = blocks / 2 * 2 + 3
            start = ContinuousClock.now
            #expect(try await Self.streamHash(client, key: "obj") == expected)
            run.download = Self.seconds(start)
            Self.report("(b2) UploadPartCopy of 8 MiB pair objects, complete, delete sources", run)
        }

        // (c) Parts written directly: each pair of blocks streamed once as an 8 MiB part of one
        // multipart upload (possible only when the node knows the order and holds the pair's
        // first block until the second arrives: the v2 case with >= 5 MiB parts, not v1).
        do {
            let client = try await freshClient(store)
            var run = Run()
            let before = store.storedBytes(bucket: client.settings.bucket)
            var start = ContinuousClock.now
            let upload = try await client.createMultipartUpload("obj")
            let parts = try await withThrowingTaskGroup(of: S3CompletedPart.self) { group in
                var parts: [S3CompletedPart] = []
                for pair in 0..<(blocks / 2) {
                    if pair >= 4, let done = try await group.next() { parts.append(done) }
                    group.addTask {
                        let offset = pair * 2 * block
                        let etag = try await client.uploadPart(
                            "obj", uploadId: upload, number: pair + 1, body: Self.body(offset..<(offset + 2 * block)))
                        return S3CompletedPart(number: pair + 1, etag: etag)
                    }
                }
                for try await done in group { parts.append(done) }
                return parts.sorted { $0.number < $1.number }
            }
            run.upload = Self.seconds(start)
            start = ContinuousClock.now
            _ = try await client.completeMultipartUpload("obj", uploadId: upload, parts: parts)
            run.assemble = Self.seconds(start)
            run.written = store.storedBytes(bucket: client.settings.bucket) - before
            run.relayed = Int64(Self.objectSize)
            run.requests = blocks / 2 + 2
            start = ContinuousClock.now
            #expect(try await Self.streamHash(client, key: "obj") == expected)
            run.download = Self.seconds(start)
            Self.report("(c) 8 MiB parts uploaded directly, complete (metadata only on SeaweedFS)", run)
        }
        print("BENCH weed RSS at the end: \(store.residentKiB() ?? 0) KiB")
        await store.stop()
    }
}
