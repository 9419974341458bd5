import HTTPKit
import Testing
import TestSupport
import UpCore
@testable import UpServer

/// v1 chunks when several up-server instances share one store (S3 behind nginx, no
/// stickiness): a client gives up on a chunk whose connection stalls and sends it again, the
/// retry lands on the other instance, which acknowledges it and the block's last chunk, and only
/// then does the stalled attempt fail or get its bytes. `BlobWriteLocks` covers one process
/// only, so what the stalled attempt may still do to the blob is decided in `BlockUploadRunner`.
@Suite("v1 chunks across instances")
struct SharedStoreChunkTests {
    /// Its failure must not cut the block back to its own offset: the bytes past it are
    /// acknowledged (a cluster-demo run lost them so, and its download came back short).
    @Test(arguments: [true, false])
    func aStaleChunkFailingLateLeavesTheAcknowledgedBlockWhole(shared: Bool) async throws {
        let nodes = try await StalledChunk(shared: shared)
        nodes.feed.yield(Array(nodes.data[100..<150]))  // part of its chunk, then nothing
        let lastCtx = try await nodes.retryAndFinishOnTheFirstNode()

        nodes.feed.finish(throwing: ClientWentAway())
        #expect(await nodes.stalled.value.status != 200)
        if shared {
            try await nodes.expectBlockWhole(lastCtx: lastCtx)
        } else {
            // One process owns the store and its write lock covers every writer, so a late
            // failure may cut back (here it does: the cut back is what the shared case must skip).
            #expect(try nodes.first.store.length(of: nodes.blob) == 100)
        }
    }

    /// The stalled attempt gets its bytes only now (they sat in its socket while it was
    /// suspended). Its first append would cut the blob back to its offset before writing: it
    /// first checks that the index still has the block there, and refuses.
    @Test func aStaleChunkWhoseBytesArriveLateIsRefusedBeforeItWrites() async throws {
        let nodes = try await StalledChunk(shared: true, appendSize: 64)  // the late bytes make an append
        let lastCtx = try await nodes.retryAndFinishOnTheFirstNode()

        nodes.feed.yield(Array(nodes.data[100..<200]))
        nodes.feed.finish()
        let stale = await nodes.stalled.value
        #expect(stale.status == 701, "\(stale.text)")
        try await nodes.expectBlockWhole(lastCtx: lastCtx)
    }

    /// Its first bytes went in before the other node moved on, the rest arrive after, and they
    /// differ (the file changed between the attempts). Its next append would write over
    /// acknowledged bytes: it checks the block's row first, and refuses.
    @Test func aStaleChunkStillWritingStopsAtItsNextAppend() async throws {
        let nodes = try await StalledChunk(shared: true, appendSize: 64)
        let changed = [UInt8](repeating: 0, count: 100)
        nodes.feed.yield(Array(changed[0..<64]))
        try await nodes.waitUntilTheBlobHolds(164)
        let lastCtx = try await nodes.retryAndFinishOnTheFirstNode()

        nodes.feed.yield(Array(changed[64...]))
        nodes.feed.finish()
        let stale = await nodes.stalled.value
        #expect(stale.status == 701, "\(stale.text)")
        try await nodes.expectBlockWhole(lastCtx: lastCtx)
    }

    /// The stalled attempt's bytes were written and hashed on its node before its client went
    /// away, and they differ from the retry's (the file changed between the attempts). That node
    /// must forget the running SHA-1 it built from them: the block's next chunk sent there starts
    /// where that hash ends, and extending it would give the block a hash of bytes it does not
    /// hold (mkfile's etag would not be the file's).
    @Test func aFailedAttemptsRunningHashIsNotExtendedByTheNextChunk() async throws {
        let nodes = try await StalledChunk(shared: true, appendSize: 100)  // its 100 bytes are one append
        nodes.feed.yield([UInt8](repeating: 0, count: 100))
        try await nodes.waitUntilTheBlobHolds(200)
        nodes.feed.finish(throwing: ClientWentAway())
        #expect(await nodes.stalled.value.status != 200)

        let retried = await nodes.first.bput(nodes.token, ctx: nodes.ctx, offset: 100, Array(nodes.data[100..<200]))
        let next = try #require(retried.json["ctx"] as? String, "\(retried.text)")
        let last = await nodes.second.bput(nodes.token, ctx: next, offset: 200, Array(nodes.data[200..<300]))
        let lastCtx = try #require(last.json["ctx"] as? String, "\(last.text)")
        let made = await nodes.first.mkfile(nodes.token, V1Paths.mkfile(300, key: "k"), [lastCtx])
        #expect(made.status == 200, "\(made.text)")
        #expect(made.json["hash"] as? String == Etag.of(nodes.data))
    }

    /// On S3, a stalled attempt's first append clears the objects past the chunk's offset (a
    /// failed try's leftovers must go), and its check before that append passes while the
    /// client's retry of the same chunk is still being written on the other node (the row moves
    /// only when a chunk ends): it removes objects of the retry. The retry must not be
    /// acknowledged over the hole; it is refused (503), and sent again the chunk is stored whole.
    @Test func aRetryWhoseObjectsAStaleAttemptClearedIsNotAcknowledged() async throws {
        let directory = TemporaryDirectory()
        let store = try await s3BlockStore(directory)
        let first = UpServerHarness(blobs: store)
        let second = UpServerHarness(sharingWith: first)
        let token = first.token()
        let kib = 1024, size = 3 << 20, chunk = 100 * kib..<(100 * kib + (2 << 20))
        let data = V1Data.bytes(size)
        let ctx = try #require(await first.mkblk(token, blockSize: size, Array(data[0..<chunk.lowerBound])).json["ctx"] as? String)
        let blob = try #require(try first.blob(of: ctx))
        func bput(on node: UpServerHarness) -> (Task<Response, Never>, AsyncThrowingStream<[UInt8], any Error>.Continuation) {
            let (body, feed) = AsyncThrowingStream<[UInt8], any Error>.makeStream()
            var request = Request(method: .post, target: "/bput/\(ctx)/\(chunk.lowerBound)", headers: UpServerHarness.auth(token))
            request.bodyStream = RequestBodyStream(body)
            return (Task { await node.send(request) }, feed)
        }
        func waitForLength(_ length: Int64) async throws {
            let deadline = ContinuousClock.now + .seconds(20)
            while try store.length(of: blob) != length, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(try store.length(of: blob) == length)
        }

        let (retry, retryFeed) = bput(on: first)
        retryFeed.yield(Array(data[chunk.lowerBound..<(chunk.lowerBound + (1 << 20))]))  // two 512 KiB objects
        try await waitForLength(Int64(chunk.lowerBound + (1 << 20)))
        let (stale, staleFeed) = bput(on: second)
        staleFeed.yield(Array(data[chunk.lowerBound..<(chunk.lowerBound + 512 * kib)]))  // its first append
        try await waitForLength(Int64(chunk.lowerBound + 512 * kib))  // the retry's second object is gone
        retryFeed.yield(Array(data[(chunk.lowerBound + (1 << 20))..<chunk.upperBound]))
        retryFeed.finish()
        let answer = await retry.value
        #expect(answer.status == 503, "\(answer.status) \(answer.text)")
        staleFeed.finish(throwing: ClientWentAway())
        #expect(await stale.value.status != 200)

        // The client goes on as the answer says: with the next chunk after a 200, else sends it again.
        let acknowledged = answer.status == 200 ? answer : await first.bput(token, ctx: ctx, offset: chunk.lowerBound, Array(data[chunk]))
        let next = try #require(acknowledged.json["ctx"] as? String, "\(acknowledged.text)")
        let last = await first.bput(token, ctx: next, offset: chunk.upperBound, Array(data[chunk.upperBound...]))
        let lastCtx = try #require(last.json["ctx"] as? String, "\(last.text)")
        let made = await first.mkfile(token, V1Paths.mkfile(size, key: "k"), [lastCtx])
        #expect(made.status == 200, "\(made.text)")
        #expect(made.json["hash"] as? String == Etag.of(data))  // no SHA-1 state of the refused attempt
        #expect(try await first.content(key: "k") == data)
    }
}

/// Two up-server nodes over one index and block store, a block of 300 bytes whose first 100
/// are in, and a bput of 100..<200 on the second node whose body the test feeds (`feed`).
private struct StalledChunk {
    let first: UpServerHarness
    /// The node the stalled attempt is on.
    let second: UpServerHarness
    let token: String
    let data = V1Data.bytes(300)
    let ctx: String
    let blob: BlobID
    let feed: AsyncThrowingStream<[UInt8], any Error>.Continuation
    let stalled: Task<Response, Never>

    init(shared: Bool, appendSize: Int? = nil) async throws {
        first = UpServerHarness()
        let second = UpServerHarness(sharingWith: first)
        self.second = second
        first.store.isShared = shared
        if let appendSize { first.store.appendSize = appendSize }
        token = first.token()
        ctx = try #require(await first.mkblk(token, blockSize: 300, Array(data[0..<100])).json["ctx"] as? String)
        blob = try #require(try first.blob(of: ctx))
        let (body, feed) = AsyncThrowingStream<[UInt8], any Error>.makeStream()
        self.feed = feed
        var request = Request(method: .post, target: "/bput/\(ctx)/100", headers: UpServerHarness.auth(token))
        request.bodyStream = RequestBodyStream(body)
        stalled = Task { await second.send(request) }
        while !second.server.writers.isHeld(blob) { await Task.yield() }
    }

    /// Waits (at most 10 s) until the stalled attempt's bytes so far are in the blob.
    func waitUntilTheBlobHolds(_ length: Int64) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while try first.store.length(of: blob) != length, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// The client's retry of the chunk and the block's last chunk, both acknowledged by the
    /// first node; returns the final ctx.
    func retryAndFinishOnTheFirstNode() async throws -> String {
        let retried = await first.bput(token, ctx: ctx, offset: 100, Array(data[100..<200]))
        let next = try #require(retried.json["ctx"] as? String, "\(retried.text)")
        let last = await first.bput(token, ctx: next, offset: 200, Array(data[200..<300]))
        return try #require(last.json["ctx"] as? String, "\(last.text)")
    }

    /// The block holds all 300 bytes, and mkfile makes an object of them.
    func expectBlockWhole(lastCtx: String) async throws {
        #expect(try first.store.read(blob, range: 0..<300) == data)
        #expect(await first.mkfile(token, V1Paths.mkfile(300, key: "k"), [lastCtx]).status == 200)
        #expect(try await first.content(key: "k") == data)
    }
}

/// A client that went away mid-body, as the body stream reports it.
private struct ClientWentAway: Error {}
