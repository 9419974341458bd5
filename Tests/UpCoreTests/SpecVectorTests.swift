import NativeCrypto
import Testing
import UpCore

/// Every qiniu-protocol.md §10 vector from vectors.json, byte for byte.
@Suite("Spec vectors (§10)")
struct SpecVectorTests {
    static let keys = KeyRing(SpecVectors.secretKeys)

    @Test("Signing the SDK's policy JSON reproduces its token", arguments: SpecVectors.tokens)
    func signReproducesToken(_ vector: SpecVectors.Token) throws {
        let mac = try #require(Self.keys.mac(for: vector.accessKey))
        #expect(UpToken.sign(policyJSON: vector.policyJSON, accessKey: vector.accessKey, mac: mac) == vector.token)
        #expect(URLSafeBase64.encode(vector.policyJSON.utf8) == vector.encodedPolicy)
    }

    @Test("SDK tokens verify until the deadline and expire one second after", arguments: SpecVectors.tokens)
    func verifyAcceptsUntilDeadline(_ vector: SpecVectors.Token) throws {
        let policy = try PutPolicy(jsonBytes: Array(vector.policyJSON.utf8))
        let token = try UpToken.verify(vector.token, keys: Self.keys, now: policy.deadline)
        #expect(token.accessKey == vector.accessKey)
        #expect(token.encodedPolicy == vector.encodedPolicy)
        #expect(token.policy == policy)
        #expect(throws: UpError(.expiredToken)) {
            try UpToken.verify(vector.token, keys: Self.keys, now: policy.deadline + 1)
        }
    }

    @Test func qboxFormCallback() throws {
        let vector = SpecVectors.object("qbox_callback_form")
        let body = Array(SpecVectors.string(vector, "body").utf8)
        let contentType = SpecVectors.string(vector, "content_type")
        let mac = try #require(Self.keys.mac(for: "test-ak"))
        let target = RequestTarget.of(url: SpecVectors.string(vector, "url"))
        #expect(target == "/callback?x=1")
        #expect(
            QBoxSignature.signingBytes(target: target, body: body, contentType: contentType)
                == Array(SpecVectors.string(vector, "signing_string").utf8))
        #expect(
            QBoxSignature.sign(target: target, body: body, contentType: contentType, accessKey: "test-ak", mac: mac)
                == SpecVectors.string(vector, "authorization"))
    }

    @Test func qboxJSONCallbackDoesNotSignBody() throws {
        let vector = SpecVectors.object("qbox_callback_json_body_not_signed")
        let body = Array(SpecVectors.string(vector, "body").utf8)
        let mac = try #require(Self.keys.mac(for: "test-ak"))
        let authorization = QBoxSignature.sign(
            target: "/callback?x=1", body: body, contentType: "application/json", accessKey: "test-ak", mac: mac)
        #expect(authorization == SpecVectors.string(vector, "authorization"))
    }

    @Test func qboxOfficialDocExample() {
        let mac = HMACSHA1(key: Array("MY_SECRET_KEY".utf8))
        let target = RequestTarget.of(
            url: "http://rs.qiniu.com/move/bmV3ZG9jczpmaW5kX21hbi50eHQ=/bmV3ZG9jczpmaW5kLm1hbi50eHQ=")
        let token = QBoxSignature.token(target: target, accessKey: "MY_ACCESS_KEY", mac: mac)
        #expect(token == "MY_ACCESS_KEY:FXsYh0wKHYPEsIAgdPD9OfjkeEM=")
        #expect(token == SpecVectors.root["qbox_official_doc_example"]?.stringValue)
    }

    @Test(arguments: ["qiniu_v2_form", "qiniu_v2_json"])
    func qiniuCallback(_ name: String) throws {
        let vector = SpecVectors.object(name)
        let headers = SpecVectors.keys(vector["headers"]!).map { ($0, SpecVectors.string(vector["headers"]!, $0)) }
        let body = Array(SpecVectors.string(vector, "body").utf8)
        let mac = try #require(Self.keys.mac(for: "test-ak"))
        let host = try #require(headers.first { $0.0 == "Host" }?.1)
        let contentType = headers.first { $0.0 == "Content-Type" }?.1
        let signing = QiniuSignature.signingBytes(
            method: "POST", target: "/callback?x=1", host: host, contentType: contentType, headers: headers, body: body)
        #expect(String(decoding: signing, as: UTF8.self) == SpecVectors.string(vector, "signing_string"))
        let authorization = QiniuSignature.sign(
            method: "POST", target: "/callback?x=1", host: host, contentType: contentType, headers: headers,
            body: body, accessKey: "test-ak", mac: mac)
        #expect(authorization == SpecVectors.string(vector, "authorization"))
    }

    @Test func qiniuGetWithoutContentTypeAndOctetStream() throws {
        let mac = try #require(Self.keys.mac(for: "test-ak"))
        let get = SpecVectors.object("qiniu_v2_get_no_content_type")
        #expect(
            QiniuSignature.sign(
                method: "GET", target: "/v2/query?ak=test-ak&bucket=b", host: "up.example.com", contentType: nil,
                body: [], accessKey: "test-ak", mac: mac) == SpecVectors.string(get, "authorization"))
        let put = SpecVectors.object("qiniu_v2_octet_stream_body_not_signed")
        #expect(
            QiniuSignature.sign(
                method: "PUT", target: "/p", host: "h", contentType: "application/octet-stream",
                body: Array("ignored body".utf8), accessKey: "test-ak", mac: mac)
                == SpecVectors.string(put, "authorization"))
    }

    @Test("v1 etags", arguments: SpecVectors.etags)
    func etag(_ vector: SpecVectors.EtagVector) {
        let bytes = vector.bytes
        #expect(bytes.count == vector.length)
        #expect(Etag.of(bytes) == vector.etag)
    }

    @Test func v2Etags() {
        let vector = SpecVectors.object("etag_v2_non4MiB_parts(qshell algorithm, not SDK)")
        let data = SpecVectors.pattern9MiB
        let mib = 1024 * 1024
        func parts(_ sizes: [Int]) -> [Etag.Part] {
            var offset = 0
            return sizes.map { size in
                var hasher = EtagHasher()
                hasher.update(data[offset..<(offset + size * mib)])
                offset += size * mib
                let result = hasher.finalize()
                return Etag.Part(digest: result.partDigest, size: result.byteCount)
            }
        }
        #expect(Etag.v2(parts: parts([2, 2, 2, 2, 1])) == SpecVectors.string(vector, "etag_parts_2MiB"))
        #expect(Etag.v2(parts: parts([5, 4])) == SpecVectors.string(vector, "parts_5MiB_4MiB"))
        #expect(Etag.v2(parts: parts([4, 4, 1])) == SpecVectors.string(vector, "parts_4MiB_4MiB_1MiB_(same as v1 etag)"))
    }

    @Test func urlShapes() {
        let urls = SpecVectors.object("urls")
        #expect(EncodedEntryURI.encode(bucket: "mybucket", key: "dir/a.txt") == SpecVectors.string(urls, "entry('mybucket','dir/a.txt')"))
        #expect(URLSafeBase64.encode([0xFB, 0xFF, 0xFE]) == SpecVectors.string(urls, "urlsafe_base64_encode(b'\\xfb\\xff\\xfe')"))
        let mkfile = SpecVectors.string(urls, "mkfile")
        #expect(mkfile.contains("/key/" + URLSafeBase64.encode("dir/七牛.mp4".utf8) + "/"))
        #expect(mkfile.contains("/fname/" + URLSafeBase64.encode("七牛.mp4".utf8) + "/"))
    }

    @Test func crc32() {
        let vector = SpecVectors.object("crc32")
        #expect(UInt32(SpecVectors.int(vector, "crc32(b'hello')")) == CRC32.checksum(Array("hello".utf8)))
        #expect(UInt32(SpecVectors.int(vector, "crc32(b'qiniu')")) == CRC32.checksum(Array("qiniu".utf8)))
        let block = (0..<(4 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0) }
        #expect(UInt32(SpecVectors.int(vector, "crc32(4MiB i%256)")) == CRC32.checksum(block))
    }
}
