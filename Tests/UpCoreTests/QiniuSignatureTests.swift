import NativeCrypto
import Testing
import UpCore

/// §10.3 Qiniu vectors through ``CallbackVerifier``.
@Suite("QiniuSignature")
struct QiniuSignatureTests {
    static let verifier = CallbackVerifier(keys: KeyRing(["test-ak": "test-sk"]))
    static let formBody = Array(
        "key=photos%2Fcat.jpg&hash=Fqr0xh3cxeii2r7eDztILNmuqUNN&fsize=5&bucket=mybucket&name=%E4%B8%83%E7%89%9B".utf8)
    static let authorization = "Qiniu test-ak:jybUHcKHiYyFQl1BshRLpMg8RZU="
    static let headers: [(String, String)] = [
        ("Host", "127.0.0.1:8080"), ("Content-Type", "application/x-www-form-urlencoded"),
        ("X-Qiniu-Date", "20300101T000000Z"), ("X-Qiniu-Bbb", "two"), ("X-Qiniu-Aaa", "one"),
    ]

    static func verify(headers: [(String, String)], body: [UInt8] = formBody) throws(UpError) -> CallbackVerifier.Verified {
        try verifier.verify(
            authorization: authorization, method: "POST", target: "/callback?x=1", headers: headers, body: body)
    }

    @Test func verifiesAndReportsSignedDate() throws {
        let verified = try Self.verify(headers: Self.headers)
        #expect(verified.scheme == .qiniu)
        #expect(verified.accessKey == "test-ak")
        #expect(verified.signedDate == 1_893_456_000)  // 2030-01-01T00:00:00Z
    }

    @Test func changedHeaderValueFails() {
        let changed = Self.headers.map { $0.0 == "X-Qiniu-Aaa" ? ($0.0, "ONE") : $0 }
        #expect(throws: UpError(.badSignature)) { try Self.verify(headers: changed) }
    }

    @Test func lowercaseHeaderNamesStillVerify() throws {
        // Unlike the Python SDK (§3.3 trap), names are canonicalized here.
        let lowered = Self.headers.map { ($0.0.lowercased(), $0.1) }
        #expect(try Self.verify(headers: lowered).signedDate == 1_893_456_000)
    }

    @Test func changedBodyOrMethodFails() {
        #expect(throws: UpError(.badSignature)) { try Self.verify(headers: Self.headers, body: Array("x=1".utf8)) }
        #expect(throws: UpError(.badSignature)) {
            try Self.verifier.verify(
                authorization: Self.authorization, method: "PUT", target: "/callback?x=1", headers: Self.headers,
                body: Self.formBody)
        }
    }

    @Test func extraUnsignedHeadersAndBareXQiniuAreIgnored() throws {
        let extra = Self.headers + [("User-Agent", "x"), ("X-Qiniu-", "ignored")]
        #expect(throws: Never.self) { try Self.verify(headers: extra) }
    }

    @Test func canonicalHeaderNames() {
        #expect(QiniuSignature.canonicalHeaderName("x-qiniu-date") == "X-Qiniu-Date")
        #expect(QiniuSignature.canonicalHeaderName("X-QINIU-AAA") == "X-Qiniu-Aaa")
        #expect(QiniuSignature.canonicalHeaderName("content-type") == "Content-Type")
        let signed = QiniuSignature.signedHeaders([("x-qiniu-b", "2"), ("X-Qiniu-A", "1"), ("X-QINIU-A", "dup"), ("X-Qiniu-", "no")])
        #expect(signed.map(\.name) == ["X-Qiniu-A", "X-Qiniu-B"])
        #expect(signed.map(\.value) == ["1", "2"])
    }

    @Test func malformedSignedDateIsRejected() {
        let mac = HMACSHA1(key: Array("test-sk".utf8))
        let headers = [("Host", "h"), ("X-Qiniu-Date", "2030-01-01")]
        let authorization = QiniuSignature.sign(
            method: "POST", target: "/cb", host: "h", contentType: nil, headers: headers, body: [],
            accessKey: "test-ak", mac: mac)
        #expect(throws: UpError(.badRequest)) {
            try Self.verifier.verify(authorization: authorization, method: "POST", target: "/cb", headers: headers, body: [])
        }
    }

    @Test func noDateMeansNoSignedDate() throws {
        let mac = HMACSHA1(key: Array("test-sk".utf8))
        let headers = [("Host", "127.0.0.1:8080"), ("Content-Type", "application/json")]
        let body = Array(#"{"a":1}"#.utf8)
        let authorization = QiniuSignature.sign(
            method: "POST", target: "/cb", host: "127.0.0.1:8080", contentType: "application/json", headers: headers,
            body: body, accessKey: "test-ak", mac: mac)
        let verified = try Self.verifier.verify(
            authorization: authorization, method: "POST", target: "/cb", headers: headers, body: body)
        #expect(verified.signedDate == nil)
        #expect(throws: UpError(.badSignature)) {
            try Self.verifier.verify(
                authorization: authorization, method: "POST", target: "/cb", headers: headers, body: Array("{}".utf8))
        }
    }
}
