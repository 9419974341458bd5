import Foundation
import HTTPKit
import NativeCrypto
import TestSupport
import Testing
import UpCore
@testable import UpServer

@Suite("v1 single-request put")
struct PutTests {
    @Test func putStoresTheBodyIn4MiBSegments() async throws {
        let harness = UpServerHarness()
        let data = V1Data.bytes(V1Data.block + 5, seed: 3)
        let path = PutPath(fsize: Int64(data.count), key: "p.bin", crc32: CRC32.checksum(data), customVariables: [("x:a", "A")])
        let token = harness.token { $0.returnBody = #"{"key":"$(key)","hash":"$(etag)","a":"$(x:a)"}"# }
        let reply = await harness.send(.post, path.path, headers: UpServerHarness.auth(token), body: data)
        #expect(reply.status == 200, "\(reply.text)")
        #expect(reply.json["hash"] as? String == Etag.of(data))
        #expect(reply.json["a"] as? String == "A")
        let object = try #require(await harness.index.object(bucket: "demo", key: "p.bin"))
        #expect(object.segments.map(\.length) == [Int64(V1Data.block), 5])
        #expect(try await harness.content(key: "p.bin") == data)
        for segment in object.segments { #expect(harness.store.syncCount(of: segment.blob) == 1) }
    }

    @Test func anEmptyPutIsTheEmptyObject() async throws {
        let harness = UpServerHarness()
        let reply = await harness.send(.post, "/put/0/key/\(V1Paths.b64("e"))", headers: UpServerHarness.auth(harness.token()))
        #expect(reply.status == 200)
        #expect(reply.json["hash"] as? String == "Fto5o-5ea0sNMlW_75VgGJCv2AcJ")
    }

    @Test func failuresLeaveNoBlobs() async throws {
        let harness = UpServerHarness()
        let token = harness.token()
        let data = V1Data.bytes(1000)
        let auth = UpServerHarness.auth(token)
        // crc32 mismatch → 406 (§7.3).
        let crc = await harness.send(.post, PutPath(fsize: 1000, crc32: CRC32.checksum(data) &+ 1).path, headers: auth, body: data)
        #expect(crc.status == 406)
        // fsize shorter or longer than the body → 400.
        #expect(await harness.send(.post, "/put/999", headers: auth, body: data).status == 400)
        #expect(await harness.send(.post, "/put/1001", headers: auth, body: data).status == 400)
        // fsizeLimit → 413 before reading.
        #expect(await harness.send(.post, "/put/1000", headers: UpServerHarness.auth(harness.token { $0.fsizeLimit = 999 }), body: data).status == 413)
        // Outside the scope → 403 after the bytes were written.
        let scoped = harness.token(scope: "demo:only")
        #expect(await harness.send(.post, PutPath(fsize: 1000, key: "not").path, headers: UpServerHarness.auth(scoped), body: data).status == 403)
        #expect(await harness.send(.post, "/put/x", headers: auth, body: data).status == 400)
        #expect(await harness.send(.post, "/put/1000", body: data).status == 401)
        #expect(try harness.store.list().isEmpty)
    }

    @Test func identicalContentUnderAnInsertOnlyKeyKeepsTheFirstBlobs() async throws {
        let harness = UpServerHarness()
        let token = harness.token()
        let data = V1Data.bytes(100)
        let path = PutPath(fsize: 100, key: "same").path
        #expect(await harness.send(.post, path, headers: UpServerHarness.auth(token), body: data).status == 200)
        #expect(await harness.send(.post, path, headers: UpServerHarness.auth(token), body: data).status == 200)
        #expect(try harness.store.list().count == 1)
        #expect(try await harness.content(key: "same") == data)
    }

    @Test func putb64DecodesEitherAlphabet() async throws {
        let harness = UpServerHarness()
        let auth = UpServerHarness.auth(harness.token())
        let data: [UInt8] = [0xFB, 0xFF, 0xFE, 0x00, 0x41]
        let standard = Array(Data(data).base64EncodedString().utf8)  // "+//+AEE=": the standard alphabet
        let reply = await harness.send(.post, PutPath(isBase64Body: true, fsize: 5, key: "b64").path, headers: auth, body: standard + [0x0A])
        #expect(reply.status == 200, "\(reply.text)")
        #expect(reply.json["hash"] as? String == Etag.of(data))
        #expect(try await harness.content(key: "b64") == data)
        let urlSafe = Array(URLSafeBase64.encode(data).utf8)
        let again = await harness.send(.post, PutPath(isBase64Body: true, fsize: 5, key: "b64u").path, headers: auth, body: urlSafe)
        #expect(again.status == 200)
        #expect(await harness.send(.post, "/putb64/5", headers: auth, body: Array("!!!!".utf8)).status == 400)
        #expect(await harness.send(.post, "/putb64/4", headers: auth, body: standard).status == 400)
    }
}
