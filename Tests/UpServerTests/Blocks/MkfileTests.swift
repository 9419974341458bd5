import Outbox
import Foundation
import HTTPKit
import NativeCrypto
import TestSupport
import Testing
import UpCore
@testable import UpServer

@Suite("v1 mkfile")
struct MkfileTests {
    /// 4 MiB, 4 MiB, 1 MiB + 3: the Python SDK's layout for a 9 MiB + 3 file.
    static let whole = V1Data.bytes(2 * V1Data.block + (1 << 20) + 3, seed: 42)

    @Test func threeBlocksOutOfOrderWithBputsMakeTheObject() async throws {
        let harness = UpServerHarness()
        let token = harness.token(scope: "demo:big.bin") {
            $0.returnBody = #"{"key":"$(key)","hash":"$(etag)","fsize":$(fsize),"fname":$(fname),"a":"$(x:a)","mime":"$(mimeType)"}"#
        }
        let data = Self.whole
        let b = V1Data.block
        // Block 3 first, then block 2 as mkblk + 2 bputs, then block 1 (§9.2: out of order).
        let third = await harness.block(token, Array(data[(2 * b)...]))
        let start = await harness.mkblk(token, blockSize: b, Array(data[b..<(b + 1_000_000)]))
        let middle = await harness.bput(
            token, ctx: start.json["ctx"] as? String ?? "", offset: 1_000_000, Array(data[(b + 1_000_000)..<(b + 3_000_000)]))
        let last = await harness.bput(
            token, ctx: middle.json["ctx"] as? String ?? "", offset: 3_000_000, Array(data[(b + 3_000_000)..<(2 * b)]))
        #expect(last.status == 200)
        let second = try #require(last.json["ctx"] as? String)
        let first = await harness.block(token, Array(data[0..<b]))

        let path = MkfilePath(
            fsize: Int64(data.count), key: "big.bin", fname: "big.bin", mimeType: "application/x-test",
            customVariables: [("x:a", "A")], metadata: [("x-qn-meta-color", "red")]
        ).path
        let reply = await harness.mkfile(token, path, [first, second, third])
        #expect(reply.status == 200, "\(reply.text)")
        #expect(reply.headers["Cache-Control"] == "no-store")
        let json = reply.json
        #expect(json["hash"] as? String == Etag.of(data))
        #expect(json["key"] as? String == "big.bin")
        #expect(json["fsize"] as? Int == data.count)
        #expect(json["fname"] as? String == "big.bin")
        #expect(json["a"] as? String == "A")
        #expect(json["mime"] as? String == "application/x-test")

        let object = try #require(await harness.index.object(bucket: "demo", key: "big.bin"))
        #expect(object.etag == Etag.of(data))
        #expect(object.fsize == Int64(data.count))
        #expect(object.segments.map(\.length) == [Int64(b), Int64(b), Int64((1 << 20) + 3)])
        #expect(object.metadata == ["x-qn-meta-color": "red"])
        #expect(object.mimeType == "application/x-test")
        #expect(try await harness.content(key: "big.bin") == data)
    }

    @Test func theEtagMatchesTheSpecVector() async throws {
        // qiniu-protocol.md §10.4: bytes(((i*31) + (i>>12)) & 0xff for i in range(9 MiB)).
        let data = (0..<(9 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ ($0 >> 12)) }
        let harness = UpServerHarness()
        let token = harness.token()
        let reply = await harness.mkfile(token, V1Paths.mkfile(data.count, key: "v.bin"), await harness.blocks(token, data))
        #expect(reply.json["hash"] as? String == "litJxRiN_qpEphigieYPgiWEx2e9")
    }

    @Test func sizeMismatchesAndMissingBlocksAre400() async throws {
        let harness = UpServerHarness()
        let token = harness.token()
        let data = Self.whole
        let contexts = await harness.blocks(token, data)
        #expect(contexts.count == 3)
        // fsize off by one either way.
        #expect(await harness.mkfile(token, V1Paths.mkfile(data.count + 1, key: "k"), contexts).status == 400)
        #expect(await harness.mkfile(token, V1Paths.mkfile(data.count - 1, key: "k"), contexts).status == 400)
        // A block the client dropped (§9.5), or all of them.
        #expect(await harness.mkfile(token, V1Paths.mkfile(data.count, key: "k"), [contexts[0], contexts[2]]).status == 400)
        #expect(await harness.mkfile(token, V1Paths.mkfile(data.count, key: "k"), []).status == 400)
        // Out of order: the short block is not last.
        #expect(await harness.mkfile(token, V1Paths.mkfile(data.count, key: "k"), [contexts[2], contexts[0], contexts[1]]).status == 400)
        // An incomplete block.
        let partial = await harness.mkblk(token, blockSize: 10, [1, 2, 3])
        let partialContext = try #require(partial.json["ctx"] as? String)
        let small = await harness.block(token, [1, 2, 3])
        #expect(await harness.mkfile(token, V1Paths.mkfile(10), [partialContext]).status == 400)
        #expect(await harness.mkfile(token, V1Paths.mkfile(3), [small]).status == 200)
        // Malformed bodies.
        #expect(await harness.send(.post, "/mkfile/3", headers: UpServerHarness.auth(token), body: Array("\(small),".utf8)).status == 400)
        #expect(await harness.send(.post, "/mkfile/3", headers: UpServerHarness.auth(token), body: Array("a b".utf8)).status == 400)
        #expect(await harness.index.object(bucket: "demo", key: "k") == nil)
    }

    @Test(arguments: ["/mkfile/abc", "/mkfile/", "/mkfile", "/mkfile/3/key", "/mkfile/3/key/%%", "/mkfile/3/key/!!/x:a/QQ==", "/mkfile/-3"])
    func aBadPathIs400(_ target: String) async {
        let harness = UpServerHarness()
        let token = harness.token()
        let ctx = await harness.block(token, [1, 2, 3])
        #expect(await harness.send(.post, target, headers: UpServerHarness.auth(token), body: Array(ctx.utf8)).status == 400)
    }

    @Test func anEmptyListWithFsizeZeroIsTheEmptyObject() async throws {
        let harness = UpServerHarness()
        let reply = await harness.mkfile(harness.token(), V1Paths.mkfile(0, key: "empty"), [])
        #expect(reply.status == 200)
        #expect(reply.json["hash"] as? String == "Fto5o-5ea0sNMlW_75VgGJCv2AcJ")
        #expect(await harness.index.object(bucket: "demo", key: "empty")?.segments == [])
    }

    @Test func badContextsAre701() async throws {
        let harness = UpServerHarness()
        let token = harness.token()
        let good = await harness.block(token, [1, 2, 3])
        let forged = BlockContext(
            blockID: Array(repeating: 1, count: 16), blockSize: 3, offset: 3, crc32: 0, expiresAt: harness.now + 100
        ).encode(mac: HMACSHA1(key: Array("not-the-server-secret".utf8)))
        #expect(await harness.mkfile(token, V1Paths.mkfile(3), [forged]).status == 701)
        // Authentic, but its block does not exist (never created, or swept).
        let unknown = BlockContext(
            blockID: Array(repeating: 1, count: 16), blockSize: 3, offset: 3, crc32: 0, expiresAt: harness.now + 100
        ).encode(mac: harness.contextMAC)
        #expect(await harness.mkfile(token, V1Paths.mkfile(3), [unknown]).status == 701)
        #expect(await harness.mkfile(token, V1Paths.mkfile(3), [good]).status == 200)
    }

    @Test func anExpiredContextIs701EvenWithAFreshToken() async throws {
        let harness = UpServerHarness()
        let ctx = await harness.block(harness.token(), [1, 2, 3])
        harness.clock.advance(by: Double(7 * 86_400 + 1))
        let reply = await harness.mkfile(harness.token(), V1Paths.mkfile(3), [ctx])
        #expect(reply.status == 701)
        #expect(reply.errorText == "invalid ctx")
    }

    @Test func aFreshTokenFinishesBlocksUploadedWithAnExpiredOne() async throws {
        // §1.2 step 3: the ctx is not bound to the token that uploaded the block.
        let harness = UpServerHarness()
        let first = harness.token(scope: "demo:f.bin", lifetime: 60)
        let ctx = await harness.block(first, [1, 2, 3])
        harness.clock.advance(by: 120)
        let stale = await harness.mkfile(first, V1Paths.mkfile(3, key: "f.bin"), [ctx])
        #expect(stale.status == 401)
        #expect(stale.errorText == "expired token")
        let fresh = await harness.mkfile(harness.token(scope: "demo:f.bin"), V1Paths.mkfile(3, key: "f.bin"), [ctx])
        #expect(fresh.status == 200)
        #expect(fresh.json["hash"] as? String == Etag.of([1, 2, 3]))
    }

    @Test func tokenAndPolicyChecks() async throws {
        let harness = UpServerHarness()
        let token = harness.token()
        let ctx = await harness.block(token, [1, 2, 3, 4, 5])
        let path = V1Paths.mkfile(5, key: "k")
        #expect(await harness.send(.post, path, body: Array(ctx.utf8)).status == 401)
        #expect(await harness.mkfile("bad", path, [ctx]).status == 401)
        #expect(await harness.mkfile(harness.token(lifetime: -1), path, [ctx]).status == 401)
        #expect(await harness.mkfile(harness.token(scope: "nobucket"), path, [ctx]).status == 631)
        let outside = await harness.mkfile(harness.token(scope: "demo:other"), path, [ctx])
        #expect(outside.status == 403)
        #expect(outside.errorText == "key doesn't match with scope")
        // fsizeLimit at mkfile: declared size (before the blocks are looked at) and final size.
        #expect(await harness.mkfile(harness.token { $0.fsizeLimit = 4 }, path, [ctx]).status == 413)
        #expect(await harness.mkfile(harness.token { $0.fsizeLimit = 4 }, V1Paths.mkfile(6, key: "k"), [ctx]).status == 413)
        #expect(await harness.mkfile(harness.token { $0.fsizeMin = 6 }, path, [ctx]).status == 403)
        #expect(await harness.mkfile(harness.token { $0.fsizeLimit = 5 }, path, [ctx]).status == 200)
    }

    @Test func insertOnlyRefusesOtherContentAndAcceptsTheSame() async throws {
        let harness = UpServerHarness()
        let token = harness.token(scope: "demo:io.bin") { $0.insertOnly = 1 }
        let path = V1Paths.mkfile(3, key: "io.bin")
        #expect(await harness.mkfile(token, path, [await harness.block(token, [1, 2, 3])]).status == 200)
        let other = await harness.mkfile(token, path, [await harness.block(token, [9, 9, 9])])
        #expect(other.status == 614)
        #expect(other.errorText == "file exists")
        let same = await harness.mkfile(token, path, [await harness.block(token, [1, 2, 3])])
        #expect(same.status == 200)
        #expect(same.json["hash"] as? String == Etag.of([1, 2, 3]))
        #expect(try await harness.content(key: "io.bin") == [1, 2, 3])
    }

    @Test func aRepeatedMkfileAnswersTheFirstResult() async throws {
        let harness = UpServerHarness()
        let token = harness.token(scope: "demo:r.bin") {
            $0.callbackUrl = "http://biz.example/cb"
            $0.callbackBody = "key=$(key)&hash=$(etag)"
        }
        harness.callbacks.script(.delivered(reply: Array(#"{"first":1}"#.utf8)))
        let contexts = await harness.blocks(token, Self.whole)
        let path = V1Paths.mkfile(Self.whole.count, key: "r.bin")
        let first = await harness.mkfile(token, path, contexts)
        #expect(first.status == 200)
        #expect(first.text == #"{"first":1}"#)
        let again = await harness.mkfile(harness.token(scope: "demo:r.bin"), path, contexts)
        #expect(again.status == 200)
        #expect(again.text == #"{"first":1}"#)
        #expect(harness.callbacks.sent.count == 1)
        #expect(await harness.index.object(bucket: "demo", key: "r.bin")?.version == 1)
        // Under an insert-only scope too: the repeat is not a 614.
        let insertOnly = harness.token()
        let ctx = await harness.block(insertOnly, [5, 6])
        let once = await harness.mkfile(insertOnly, V1Paths.mkfile(2, key: "io"), [ctx])
        #expect(once.status == 200)
        let twice = await harness.mkfile(insertOnly, V1Paths.mkfile(2, key: "io"), [ctx])
        #expect(twice.status == 200)
        #expect(twice.text == once.text)
    }

    /// scripts/chaos/server-crash: up-server killed while the callback of a finished mkfile was
    /// out (or the first answer was 579) left no first result; the repeated mkfile answered
    /// `200 {"hash","key"}` — success without the callback's reply. It must try the callback
    /// again: 579 while it still fails, then 200 with the callback's reply (and keep that).
    @Test func aRepeatedMkfileWithoutAFirstResultRetriesTheCallback() async throws {
        let harness = UpServerHarness()
        let token = harness.token(scope: "demo:cb2.bin") {
            $0.callbackUrl = "http://biz.example/cb"
            $0.callbackBody = "key=$(key)&hash=$(etag)"
        }
        harness.callbacks.script(.failed(reason: "down"), .failed(reason: "still down"),
                                 .delivered(reply: Array(#"{"record":1}"#.utf8)))
        let ctx = await harness.block(token, [7, 8, 9])
        let path = V1Paths.mkfile(3, key: "cb2.bin")
        let first = await harness.mkfile(token, path, [ctx])
        #expect(first.status == 579)
        let second = await harness.mkfile(token, path, [ctx])
        #expect(second.status == 579, "\(second.status) \(second.text)")
        #expect(second.errorText == "still down")
        let third = await harness.mkfile(token, path, [ctx])
        #expect(third.status == 200)
        #expect(third.text == #"{"record":1}"#)
        let fourth = await harness.mkfile(token, path, [ctx])
        #expect(fourth.text == #"{"record":1}"#)
        #expect(harness.callbacks.sent.count == 3)
        #expect(harness.callbacks.sent.allSatisfy { $0.body == "key=cb2.bin&hash=\(Etag.of([7, 8, 9]))" })
        #expect(await harness.index.object(bucket: "demo", key: "cb2.bin")?.version == 1)
        // The repeats attempted the first request's outbox entry, not a callback beside it: the
        // entry is delivered, so the background retrier has nothing left to send again.
        #expect(try await harness.index.outbox.depth() == 0)
        #expect(try await harness.index.outbox.list([.delivered], before: nil, limit: 5).count == 1)
    }

    /// scripts/chaos/server-crash (a callback delivered twice): the process that stored the
    /// object died while its callback attempt was out, so the entry stays claimed by it; the
    /// client's repeated mkfile, on a restarted process, must deliver THAT entry once its lease
    /// has run out — not deliver beside it and leave it for the retrier to send a second time.
    @Test func aRepeatedMkfileAfterACrashDeliversTheFirstRequestsEntryOnce() async throws {
        let harness = UpServerHarness()
        let token = harness.token(scope: "demo:crash.bin") {
            $0.callbackUrl = "http://biz.example/cb"
            $0.callbackBody = "key=$(key)"
        }
        harness.callbacks.script(.failed(reason: "reply lost"), .delivered(reply: Array(#"{"record":7}"#.utf8)))
        let ctx = await harness.block(token, [1, 2, 3])
        let path = V1Paths.mkfile(3, key: "crash.bin")
        #expect(await harness.mkfile(token, path, [ctx]).status == 579)
        // The entry as a dead process left it: claimed, its lease running.
        let pending = try #require(try await harness.index.outbox.list([.pending], before: nil, limit: 1).first)
        let held = try #require(try await harness.index.outbox.expedite(pending.id, owner: "up-dead", now: harness.now))
        harness.clock.advance(by: Double(held.leaseSeconds))
        let repeated = await harness.mkfile(token, path, [ctx])
        #expect(repeated.status == 200, "\(repeated.status) \(repeated.text)")
        #expect(repeated.text == #"{"record":7}"#)
        #expect(harness.callbacks.sent.count == 2)
        let delivered = try #require(try await harness.index.outbox.entry(id: pending.id))
        #expect(delivered.delivery.state == .delivered && delivered.reply == #"{"record":7}"#)
        #expect(try await harness.index.outbox.depth() == 0)
    }

    @Test func theCallbackReplyIsRelayedAnd579WhenItFails() async throws {
        let harness = UpServerHarness()
        let token = harness.token(scope: "demo:cb.bin") {
            $0.callbackUrl = "http://biz.example/cb"
            $0.callbackBody = "key=$(key)&hash=$(etag)&a=$(x:a)"
        }
        let ctx = await harness.block(token, [1, 2, 3])
        let path = MkfilePath(fsize: 3, key: "cb.bin", customVariables: [("x:a", "A&B")]).path
        let ok = await harness.mkfile(token, path, [ctx])
        #expect(ok.status == 200)
        #expect(ok.text == #"{"ok":true}"#)
        let sent = try #require(harness.callbacks.sent.first)
        #expect(sent.body == "key=cb.bin&hash=\(Etag.of([1, 2, 3]))&a=A%26B")

        harness.callbacks.script(.failed(reason: "down"))
        let other = await harness.block(token, [4, 5, 6])
        let failed = await harness.mkfile(token, MkfilePath(fsize: 3, key: "cb.bin").path, [other])
        #expect(failed.status == 579)
        #expect(failed.errorText == "down")
        // 579 means stored (§3.4).
        #expect(try await harness.content(key: "cb.bin") == [4, 5, 6])
    }

    @Test func emptySegmentsInThePathKeepTheirPlace() async throws {
        let harness = UpServerHarness()
        let token = harness.token { $0.returnBody = #"{"empty":"$(x:empty)","uid":"$(x:uid)","key":"$(key)"}"# }
        let ctx = await harness.block(token, [1, 2, 3])
        let target = "/mkfile/3/x:empty//key/\(V1Paths.b64("e.bin"))/x:uid/\(V1Paths.b64("42"))/unknown/x"
        let reply = await harness.mkfile(token, target, [ctx])
        #expect(reply.status == 200, "\(reply.text)")
        #expect(reply.json["empty"] as? String == "")
        #expect(reply.json["uid"] as? String == "42")
        #expect(reply.json["key"] as? String == "e.bin")
    }

    @Test func withoutAKeyTheEtagNamesTheObject() async throws {
        let harness = UpServerHarness()
        let token = harness.token()
        let reply = await harness.mkfile(token, V1Paths.mkfile(3), [await harness.block(token, [1, 2, 3])])
        #expect(reply.json["key"] as? String == Etag.of([1, 2, 3]))
    }

    @Test func theSniffedTypeFeedsMimeLimit() async throws {
        let harness = UpServerHarness()
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 600)
        let token = harness.token { $0.mimeLimit = "image/*"; $0.detectMime = 1 }
        let ok = await harness.mkfile(token, V1Paths.mkfile(png.count, key: "p"), [await harness.block(token, png)])
        #expect(ok.status == 200)
        #expect(await harness.index.object(bucket: "demo", key: "p")?.mimeType == "image/png")
        let text = Array("hello world".utf8)
        let refused = await harness.mkfile(token, V1Paths.mkfile(text.count, key: "t"), [await harness.block(token, text)])
        #expect(refused.status == 403)
    }

    /// The first bytes are read back (a GET on S3) only when the type can depend on them and
    /// mkblk could not sniff them itself: here the key's extension decides, until the policy asks
    /// for detection; then mkblk's first chunk, which held the whole sniffing window, answers;
    /// a first chunk shorter than the window is read back.
    @Test func theBlocksAreReadBackOnlyWhenTheSniffedTypeCanMatter() async throws {
        let harness = UpServerHarness()
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 600)
        let plain = harness.token()
        let ctx = await harness.block(plain, png)
        let before = harness.store.readCount
        let named = await harness.mkfile(plain, V1Paths.mkfile(png.count, key: "p.txt"), [ctx])
        #expect(named.status == 200, "\(named.text)")
        #expect(harness.store.readCount == before)
        #expect(await harness.index.object(bucket: "demo", key: "p.txt")?.mimeType == "text/plain")

        let detecting = harness.token { $0.detectMime = 1 }
        let again = await harness.mkfile(detecting, V1Paths.mkfile(png.count, key: "q.txt"), [await harness.block(detecting, png)])
        #expect(again.status == 200, "\(again.text)")
        #expect(harness.store.readCount == before)
        #expect(await harness.index.object(bucket: "demo", key: "q.txt")?.mimeType == "image/png")

        let first = await harness.mkblk(detecting, blockSize: png.count, Array(png[..<100]))
        let firstCtx = try #require(first.json["ctx"] as? String)
        let rest = await harness.bput(detecting, ctx: firstCtx, offset: 100, Array(png[100...]))
        let lastCtx = try #require(rest.json["ctx"] as? String)
        let split = await harness.mkfile(detecting, V1Paths.mkfile(png.count, key: "r.txt"), [lastCtx])
        #expect(split.status == 200, "\(split.text)")
        #expect(harness.store.readCount == before + 1)
        #expect(await harness.index.object(bucket: "demo", key: "r.txt")?.mimeType == "image/png")
    }

    @Test func rsMkfileTakesTheKeyFromTheEntry() async throws {
        let harness = UpServerHarness()
        let token = harness.token(scope: "demo:rs.txt")
        let ctx = await harness.block(token, Array("hello".utf8))
        let path = RsMkfilePath(bucket: "demo", key: "rs.txt", fsize: 5, mimeType: "text/plain").path
        let reply = await harness.mkfile(token, path, [ctx])
        #expect(reply.status == 200, "\(reply.text)")
        #expect(reply.json["key"] as? String == "rs.txt")
        #expect(reply.json["hash"] as? String == "Fqr0xh3cxeii2r7eDztILNmuqUNN")
        let wrongBucket = RsMkfilePath(bucket: "other", key: "rs.txt", fsize: 5).path
        #expect(await harness.mkfile(token, wrongBucket, [ctx]).status == 403)
        #expect(await harness.mkfile(token, "/rs-mkfile/!!/fsize/5", [ctx]).status == 400)
        #expect(await harness.mkfile(token, RsMkfilePath(bucket: "demo", key: "rs.txt", fsize: 6).path, [ctx]).status == 400)
    }
}
