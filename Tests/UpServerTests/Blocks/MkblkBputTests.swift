import Foundation
import HTTPKit
import NativeCrypto
import TestSupport
import Testing
import UpCore
@testable import UpServer

@Suite("v1 mkblk and bput")
struct MkblkBputTests {
    @Test func mkblkOfAWholeBlockAnswersEveryField() async throws {
        let harness = UpServerHarness()
        let body = Array("123456789".utf8)  // CRC 0xCBF43926: above Int32.max, must stay unsigned (§10.5)
        let reply = await harness.mkblk(harness.token(), blockSize: body.count, body)
        #expect(reply.status == 200)
        #expect(reply.headers["Cache-Control"] == "no-store")
        let json = reply.json
        let ctx = try #require(json["ctx"] as? String)
        #expect(ctx.utf8.allSatisfy { $0.isContextCharacter })
        #expect(json["crc32"] as? Int == 3_421_780_262)
        #expect(json["crc32"] as? Int == Int(CRC32.checksum(body)))
        #expect(reply.text.contains("\"crc32\":3421780262"))
        #expect(json["offset"] as? Int == 9)
        #expect(json["host"] as? String == "http://127.0.0.1:9000")
        #expect(json["expired_at"] as? Int == Int(harness.now) + 7 * 86_400)
        #expect(json["checksum"] as? String == URLSafeBase64.encode(SHA1.hash(body)))

        let context = try BlockContext.decode(ctx, mac: harness.contextMAC, now: harness.now)
        #expect(context.blockSize == 9 && context.offset == 9 && context.isComplete)
        #expect(context.crc32 == CRC32.checksum(body))
        let blob = try #require(BlockContexts.blob(of: context))
        let record = try #require(await harness.index.block(blob))
        #expect(record.sha1 == SHA1.hash(body))
        #expect(try harness.store.read(blob, range: 0..<9) == body)
        #expect(harness.store.syncCount(of: blob) == 1)
    }

    @Test func aBlockInThreeChunksCarriesOffsetsAndCRCs() async throws {
        let harness = UpServerHarness()
        let token = harness.token()
        let data = V1Data.bytes(300_000)
        let first = await harness.mkblk(token, blockSize: data.count, Array(data[0..<100_000]))
        #expect(first.status == 200)
        #expect(first.json["offset"] as? Int == 100_000)
        #expect(first.json["checksum"] as? String == "")  // only known once the block is complete
        let blob = try #require(try harness.blob(of: first.json["ctx"] as? String ?? ""))
        #expect(harness.store.syncCount(of: blob) == 0)

        let second = await harness.bput(
            token, ctx: first.json["ctx"] as? String ?? "", offset: 100_000, Array(data[100_000..<250_000]))
        #expect(second.status == 200)
        #expect(second.json["offset"] as? Int == 250_000)
        #expect(second.json["crc32"] as? Int == Int(CRC32.checksum(data[100_000..<250_000])))
        #expect(second.json["expired_at"] as? Int == first.json["expired_at"] as? Int)

        let third = await harness.bput(
            token, ctx: second.json["ctx"] as? String ?? "", offset: 250_000, Array(data[250_000...]))
        #expect(third.status == 200)
        #expect(third.json["offset"] as? Int == 300_000)
        #expect(third.json["checksum"] as? String == URLSafeBase64.encode(SHA1.hash(data)))
        let context = try BlockContext.decode(third.json["ctx"] as? String ?? "", mac: harness.contextMAC, now: harness.now)
        #expect(context.isComplete && context.crc32 == CRC32.checksum(data))
        #expect(try harness.store.read(blob, range: 0..<300_000) == data)
        #expect(harness.store.syncCount(of: blob) == 1)
        #expect(await harness.index.block(blob)?.sha1 == SHA1.hash(data))
    }

    @Test func syncEveryChunkSyncsIncompleteBlocks() async throws {
        let harness = UpServerHarness { $0.syncEveryChunk = true }
        let reply = await harness.mkblk(harness.token(), blockSize: 10, [1, 2, 3])
        let blob = try #require(try harness.blob(of: reply.json["ctx"] as? String ?? ""))
        #expect(harness.store.syncCount(of: blob) == 1)
    }

    @Test(arguments: ["/mkblk/0", "/mkblk/4194305", "/mkblk/abc", "/mkblk/", "/mkblk", "/mkblk/5/6", "/mkblk/-1"])
    func mkblkRejectsABadPath(_ target: String) async {
        let harness = UpServerHarness()
        let reply = await harness.send(.post, target, headers: UpServerHarness.auth(harness.token()), body: [1])
        #expect(reply.status == 400)
    }

    @Test func mkblkRejectsAFirstChunkLongerThanTheBlockOrEmpty() async throws {
        let harness = UpServerHarness()
        let token = harness.token()
        #expect(await harness.mkblk(token, blockSize: 3, [1, 2, 3, 4]).status == 400)
        var headers = UpServerHarness.auth(token)
        headers.add(name: "Content-Length", value: "4")
        #expect(await harness.send(.post, "/mkblk/3", headers: headers, body: [1, 2, 3, 4]).status == 400)
        #expect(await harness.mkblk(token, blockSize: 3, []).status == 400)
        // A failed mkblk leaves neither a row nor a blob behind.
        #expect(try harness.store.list().isEmpty)
        #expect(await harness.index.knownBlobs().isEmpty)
        // More than 4 MiB is refused by the route's limit.
        #expect(await harness.mkblk(token, blockSize: V1Data.block, [UInt8](repeating: 0, count: V1Data.block + 1)).status == 413)
    }

    @Test func mkblkChecksTheToken() async {
        let harness = UpServerHarness()
        #expect(await harness.send(.post, "/mkblk/1", body: [1]).status == 401)
        #expect(await harness.mkblk("ak:sig:policy", blockSize: 1, [1]).status == 401)
        let expired = await harness.mkblk(harness.token(lifetime: -10), blockSize: 1, [1])
        #expect(expired.status == 401)
        #expect(expired.errorText == "expired token")
        let noBucket = await harness.mkblk(harness.token(scope: "nobucket"), blockSize: 1, [1])
        #expect(noBucket.status == 631)
    }

    @Test func mkblkEnforcesFsizeLimit() async {
        let harness = UpServerHarness()
        let token = harness.token { $0.fsizeLimit = 10 }
        #expect(await harness.mkblk(token, blockSize: 11, [1]).status == 413)
        #expect(await harness.mkblk(token, blockSize: 10, [1]).status == 200)
    }

    @Test func bputRefusesForgedMalformedAndStaleContexts() async throws {
        let harness = UpServerHarness()
        let token = harness.token()
        let first = await harness.mkblk(token, blockSize: 100, [UInt8](repeating: 7, count: 10))
        let ctx = try #require(first.json["ctx"] as? String)
        // Forged: same fields, another secret.
        let context = try BlockContext.decode(ctx, mac: harness.contextMAC, now: harness.now)
        let forged = BlockContext(
            blockID: context.blockID, blockSize: 100, offset: 10, crc32: context.crc32, expiresAt: context.expiresAt
        ).encode(mac: HMACSHA1(key: Array("another-secret-0123456789".utf8)))
        #expect(await harness.bput(token, ctx: forged, offset: 10, [1]).status == 701)
        // Tampered: one character changed.
        let tampered = String(ctx.prefix(10)) + (ctx.dropFirst(10).first == "A" ? "B" : "A") + ctx.dropFirst(11)
        #expect(await harness.bput(token, ctx: tampered, offset: 10, [1]).status == 701)
        // Not ctx text at all: 400 from the path parser.
        #expect(await harness.bput(token, ctx: "a.b", offset: 10, [1]).status == 400)
        #expect(await harness.send(.post, "/bput/\(ctx)", headers: UpServerHarness.auth(token), body: [1]).status == 400)
        // Offset in the path differs from the ctx.
        #expect(await harness.bput(token, ctx: ctx, offset: 9, [1]).status == 701)
        #expect(await harness.bput(token, ctx: ctx, offset: 11, [1]).status == 701)
        // A ctx for a block that never existed, correctly signed.
        let unknown = BlockContext(
            blockID: Array(repeating: 0xAB, count: 16), blockSize: 100, offset: 10, crc32: 0, expiresAt: context.expiresAt
        ).encode(mac: harness.contextMAC)
        #expect(await harness.bput(token, ctx: unknown, offset: 10, [1]).status == 701)
        // An earlier ctx of a block that moved on: accepted, the block carries on from it (the
        // client never got the later reply), and the later ctx is the stale one now.
        let second = await harness.bput(token, ctx: ctx, offset: 10, [1, 2])
        #expect(second.status == 200)
        let later = try #require(second.json["ctx"] as? String)
        let again = await harness.bput(token, ctx: ctx, offset: 10, [3, 4])
        #expect(again.status == 200, "\(again.text)")
        #expect(again.json["offset"] as? Int == 12)
        let stale = await harness.bput(token, ctx: later, offset: 12, [5])
        #expect(stale.status == 701)
        #expect(stale.errorText == "invalid ctx")
    }

    @Test func aResumeFromAnOlderCtxRewindsTheBlockAndTheObjectHasTheNewBytes() async throws {
        let harness = UpServerHarness()
        let token = harness.token()
        let first = await harness.mkblk(token, blockSize: 6, [1, 2])
        let ctx = try #require(first.json["ctx"] as? String)
        // Accepted, but the client "never saw" this reply (killed): it resumes from ctx.
        #expect(await harness.bput(token, ctx: ctx, offset: 2, [9, 9]).status == 200)
        let resumed = await harness.bput(token, ctx: ctx, offset: 2, [3, 4])
        #expect(resumed.json["crc32"] as? Int == Int(CRC32.checksum([3, 4] as [UInt8])))
        let last = await harness.bput(token, ctx: try #require(resumed.json["ctx"] as? String), offset: 4, [5, 6])
        #expect(last.status == 200)
        let made = await harness.send(
            .post, V1Paths.mkfile(6, key: "rewound.bin"), headers: UpServerHarness.auth(token),
            body: Array(try #require(last.json["ctx"] as? String).utf8))
        #expect(made.status == 200, "\(made.text)")
        #expect(made.json["hash"] as? String == Etag.of([1, 2, 3, 4, 5, 6] as [UInt8]))
        // A complete block is never rewound: other bytes from an older ctx are refused.
        #expect(await harness.bput(token, ctx: ctx, offset: 2, [7, 7]).status == 701)
        #expect(await harness.bput(token, ctx: ctx, offset: 2, [3, 4, 5, 6, 0]).status == 701)
    }

    @Test func olderCtxOfACompleteBlockReplaysItsStoredChunksToTheFinalCtx() async throws {
        let harness = UpServerHarness()
        let token = harness.token()
        let first = await harness.mkblk(token, blockSize: 6, [1, 2])
        let ctx = try #require(first.json["ctx"] as? String)
        let middle = await harness.bput(token, ctx: ctx, offset: 2, [3, 4])
        let middleCtx = try #require(middle.json["ctx"] as? String)
        let last = await harness.bput(token, ctx: middleCtx, offset: 4, [5, 6])
        let finalCtx = try #require(last.json["ctx"] as? String)
        // The client lost both replies (killed) and resends from its checkpoint's ctx: each chunk
        // that repeats the stored bytes gets the ctx the block had after it.
        let replayed = await harness.bput(token, ctx: ctx, offset: 2, [3, 4])
        #expect(replayed.status == 200, "\(replayed.text)")
        #expect(replayed.json["offset"] as? Int == 4)
        #expect(replayed.json["crc32"] as? Int == Int(CRC32.checksum([3, 4] as [UInt8])))
        #expect(replayed.json["ctx"] as? String == middleCtx)
        let end = await harness.bput(token, ctx: middleCtx, offset: 4, [5, 6])
        #expect(end.status == 200 && end.json["ctx"] as? String == finalCtx)
        #expect(end.json["checksum"] as? String == last.json["checksum"] as? String)
        // The block itself never moved: the object is the original bytes.
        let made = await harness.send(
            .post, V1Paths.mkfile(6, key: "replayed.bin"), headers: UpServerHarness.auth(token),
            body: Array(finalCtx.utf8))
        #expect(made.json["hash"] as? String == Etag.of([1, 2, 3, 4, 5, 6] as [UInt8]))
        // Other bytes, or a chunk running past the end, are still 701.
        #expect(await harness.bput(token, ctx: middleCtx, offset: 4, [5, 7]).status == 701)
        #expect(await harness.bput(token, ctx: middleCtx, offset: 4, [5, 6, 7]).status == 701)
    }

    @Test func bputRefusesAnOverflowingChunk() async throws {
        let harness = UpServerHarness()
        let token = harness.token()
        let first = await harness.mkblk(token, blockSize: 10, [1, 2, 3, 4, 5, 6])
        let ctx = try #require(first.json["ctx"] as? String)
        #expect(await harness.bput(token, ctx: ctx, offset: 6, [1, 2, 3, 4, 5]).status == 701)
        var headers = UpServerHarness.auth(token)
        headers.add(name: "Content-Length", value: "5")
        #expect(await harness.send(.post, "/bput/\(ctx)/6", headers: headers, body: [1, 2, 3, 4, 5]).status == 701)
        // The refused bytes were never acknowledged: the block continues from 6.
        let next = await harness.bput(token, ctx: ctx, offset: 6, [7, 8, 9, 10])
        #expect(next.status == 200)
        #expect(next.json["checksum"] as? String == URLSafeBase64.encode(SHA1.hash([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])))
        // A complete block takes no more chunks.
        let done = try #require(next.json["ctx"] as? String)
        #expect(await harness.bput(token, ctx: done, offset: 10, [1]).status == 701)
    }

    @Test func bputRefusesAnExpiredContextButHonoursItUntilExpiry() async throws {
        let harness = UpServerHarness()
        let first = await harness.mkblk(harness.token(), blockSize: 10, [1])
        let ctx = try #require(first.json["ctx"] as? String)
        let expiredAt = try #require(first.json["expired_at"] as? Int)
        harness.clock.set(Double(expiredAt))
        let atExpiry = await harness.bput(harness.token(), ctx: ctx, offset: 1, [2])
        #expect(atExpiry.status == 200)  // never invalid before (or at) the advertised expiry (§4.2)
        harness.clock.set(Double(expiredAt + 1))
        let next = try #require(atExpiry.json["ctx"] as? String)
        #expect(await harness.bput(harness.token(), ctx: next, offset: 2, [3]).status == 701)
    }

    @Test func bputChecksTheToken() async throws {
        let harness = UpServerHarness()
        let first = await harness.mkblk(harness.token(), blockSize: 10, [1])
        let ctx = try #require(first.json["ctx"] as? String)
        #expect(await harness.send(.post, "/bput/\(ctx)/1", body: [2]).status == 401)
        #expect(await harness.bput(harness.token(lifetime: -1), ctx: ctx, offset: 1, [2]).status == 401)
        #expect(await harness.bput(harness.token { $0.fsizeLimit = 5 }, ctx: ctx, offset: 1, [2]).status == 413)
    }

    @Test func aNewerChunkForTheSameBlockTakesOverFromOneStillRunning() async throws {
        let harness = UpServerHarness()
        let token = harness.token()
        let first = await harness.mkblk(token, blockSize: 10, [1])
        let ctx = try #require(first.json["ctx"] as? String)
        let blob = try #require(try harness.blob(of: ctx))
        // A writer that never finishes on its own (a request whose client vanished).
        let stuck = Task {
            try await harness.server.writers.takeOver(blob) {
                try await Task.sleep(for: .seconds(60))
                return 0
            }
        }
        while !harness.server.writers.isHeld(blob) { await Task.yield() }
        let started = ContinuousClock.now
        let retried = await harness.bput(token, ctx: ctx, offset: 1, [2])
        #expect(retried.status == 200, "\(retried.text)")
        #expect(ContinuousClock.now - started < .seconds(5))
        await #expect(throws: CancellationError.self) { try await stuck.value }
        // The superseded writer left nothing behind: the block continues from the new chunk.
        let next = try #require(retried.json["ctx"] as? String)
        #expect(await harness.bput(token, ctx: next, offset: 2, [3]).status == 200)
    }
}

extension UInt8 {
    /// `[A-Za-z0-9_=-]` (qiniu-protocol.md §4.2).
    var isContextCharacter: Bool {
        (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) || (0x30...0x39).contains(self)
            || self == UInt8(ascii: "_") || self == UInt8(ascii: "=") || self == UInt8(ascii: "-")
    }
}
