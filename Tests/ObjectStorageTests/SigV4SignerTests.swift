import Foundation
import NativeCrypto
import ObjectStorage
import Testing
import TestSupport

/// SigV4 against three oracles that are not our code: AWS's published test suite, the S3 examples
/// in the S3 API reference with their published signatures, and botocore's `S3SigV4Auth`.
@Suite("SigV4 signer")
struct SigV4SignerTests {
    static let time = SigV4Timestamp(amzDate: "20150830T123600Z")!

    @Test("AWS test suite", arguments: SigV4SuiteVector.all)
    func suite(vector: SigV4SuiteVector) {
        var headers = vector.headers
        // The suite's known inconsistency (Vectors/aws-sig-v4-test-suite/README.md).
        let contentLengthUnsigned = vector.name == "post-x-www-form-urlencoded"
        if contentLengthUnsigned { headers.removeAll { $0.name.lowercased() == "content-length" } }
        let request = SigV4Signer.Request(
            method: vector.method, encodedPath: URIEncoding.path(vector.path), query: vector.query,
            headers: headers, payloadHash: Hex.encode(SHA256.hash(vector.body)))
        let signer = SigV4SuiteVector.signer
        let canonical = SigV4Signer.canonicalRequest(request).text
        if !contentLengthUnsigned { #expect(canonical == vector.canonicalRequest) }
        #expect(signer.stringToSign(canonicalRequest: canonical, at: Self.time) == vector.stringToSign)
        #expect(signer.authorization(for: request, at: Self.time) == vector.authorization)
    }

    @Test func suiteHasTheNamedCases() {
        let names = Set(SigV4SuiteVector.all.map(\.name))
        #expect(names.count == 22)
        for name in ["get-vanilla", "get-vanilla-query-order-key", "post-x-www-form-urlencoded", "get-utf8"] {
            #expect(names.contains(name))
        }
    }

    /// The S3 API reference, "Signature Calculations for the Authorization Header: Transferring
    /// Payload in a Single Chunk", section "Examples": the four requests with their published
    /// signatures (credentials `AKIAIOSFODNN7EXAMPLE`, 2013-05-24, us-east-1).
    struct S3Example: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let method: String
        let path: String
        let query: [(name: String, value: String)]
        let headers: [(name: String, value: String)]
        let body: String
        let signedHeaders: String
        let signature: String
    }

    static let s3Examples = [
        S3Example(
            testDescription: "GET Object", method: "GET", path: "/test.txt", query: [],
            headers: [("Range", "bytes=0-9")], body: "",
            signedHeaders: "host;range;x-amz-content-sha256;x-amz-date",
            signature: "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"),
        S3Example(
            testDescription: "PUT Object", method: "PUT", path: "/test$file.text", query: [],
            headers: [("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY")],
            body: "Welcome to Amazon S3.",
            signedHeaders: "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
            signature: "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"),
        S3Example(
            testDescription: "GET Bucket Lifecycle", method: "GET", path: "/", query: [("lifecycle", "")],
            headers: [], body: "", signedHeaders: "host;x-amz-content-sha256;x-amz-date",
            signature: "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"),
        S3Example(
            testDescription: "GET Bucket (List Objects)", method: "GET", path: "/",
            query: [("prefix", "J"), ("max-keys", "2")], headers: [], body: "",
            signedHeaders: "host;x-amz-content-sha256;x-amz-date",
            signature: "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"),
    ]

    @Test("S3 API reference examples", arguments: s3Examples)
    func s3Example(example: S3Example) throws {
        let signer = SigV4Signer(
            credentials: S3Credentials(
                accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            region: "us-east-1")
        let request = SigV4Signer.Request(
            method: example.method, encodedPath: URIEncoding.path(example.path), query: example.query,
            headers: [("Host", "examplebucket.s3.amazonaws.com")] + example.headers,
            payloadHash: Hex.encode(SHA256.hash(Array(example.body.utf8))))
        let headers = signer.signedHeaders(for: request, at: SigV4Timestamp(secondsSince1970: 1_369_353_600))
        let authorization = try #require(headers.first { $0.name == "Authorization" }?.value)
        #expect(authorization == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            + "SignedHeaders=\(example.signedHeaders), Signature=\(example.signature)")
        #expect(headers.contains { $0 == ("x-amz-date", "20130524T000000Z") })
    }

    /// Requests shaped like the client's own (odd keys, valueless `?uploads`, multipart and list
    /// parameters, an unsigned streamed payload) signed by us and by botocore.
    @Test func matchesBotocore() async throws {
        let keys = ["a b/ü+=&%?.txt", "plain", "dir/x~y_z-0.9", "東京/file (1).bin", "semi;colon,comma*star"]
        let queries: [[(String, String)]] = [
            [("uploads", "")], [("uploadId", "2~abc/def=="), ("partNumber", "7")],
            [("list-type", "2"), ("prefix", "a b/"), ("continuation-token", "x/y+z=="), ("max-keys", "1000")],
            [("delete", "")], [],
        ]
        var cases: [[String: Any]] = []
        var ours: [String] = []
        let signer = SigV4Signer(credentials: S3Credentials(accessKeyId: "AK", secretAccessKey: "S/K+e"), region: "eu-west-3")
        for (index, key) in keys.enumerated() {
            let query = queries[index]
            let method = index % 2 == 0 ? "PUT" : "GET"
            let payload = index % 2 == 0 ? SigV4Signer.unsignedPayload : SigV4Signer.emptyPayloadHash
            let headers = [("Range", "bytes=0-\(index)"), ("x-amz-copy-source", "/b/\(URIEncoding.path(key))")]
            let time = SigV4Timestamp(secondsSince1970: 1_700_000_000 + Int64(index) * 86_399)
            let request = SigV4Signer.Request(
                method: method, encodedPath: "/bucket/" + URIEncoding.path(key), query: query.map { ($0.0, $0.1) },
                headers: [("Host", "127.0.0.1:8333")] + headers.map { ($0.0, $0.1) }, payloadHash: payload)
            ours.append(try #require(signer.signedHeaders(for: request, at: time).last?.value))
            cases.append([
                "method": method, "host": "127.0.0.1:8333", "path": "/bucket/" + key,
                "query": query.map { [$0.0, $0.1] }, "headers": headers.map { [$0.0, $0.1] }, "payloadHash": payload,
                "amzDate": time.amzDate, "accessKeyId": "AK", "secretAccessKey": "S/K+e", "region": "eu-west-3",
            ])
        }
        let argument = String(decoding: try JSONSerialization.data(withJSONObject: cases), as: UTF8.self)
        let script = PythonSDK.repositoryRoot.appending(path: "Tests/Conformance/botocore_sigv4.py").path
        let (status, output) = try await PythonSDK.run([script, argument])
        try #require(status == 0, "\(output)")
        let theirs = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String]
        #expect(theirs == ours)
    }

    /// The signer keeps its last signing key; a fresh signer derives every key, so it is the
    /// reference for each signature, across days and after the credentials or scope change.
    @Test func aKeptSigningKeyNeverSignsForOtherInputs() {
        func fresh(_ secret: String, _ region: String) -> SigV4Signer {
            SigV4Signer(credentials: S3Credentials(accessKeyId: "AK", secretAccessKey: secret), region: region)
        }
        let request = SigV4Signer.Request(
            method: "PUT", encodedPath: "/b/k", headers: [("Host", "127.0.0.1:8333")], payloadHash: SigV4Signer.unsignedPayload)
        let day = SigV4Timestamp(secondsSince1970: 1_700_000_000)
        let nextDay = SigV4Timestamp(secondsSince1970: 1_700_086_400)
        var signer = fresh("one", "r1")
        for time in [day, day, nextDay, day] {
            #expect(signer.authorization(for: request, at: time) == fresh("one", "r1").authorization(for: request, at: time))
        }
        signer.credentials = S3Credentials(accessKeyId: "AK", secretAccessKey: "two")
        #expect(signer.authorization(for: request, at: day) == fresh("two", "r1").authorization(for: request, at: day))
        signer.region = "r2"
        #expect(signer.authorization(for: request, at: day) == fresh("two", "r2").authorization(for: request, at: day))
    }

    @Test func timestampFormsAndParsing() {
        #expect(SigV4Timestamp(secondsSince1970: 1_440_938_160).amzDate == "20150830T123600Z")
        #expect(SigV4Timestamp(secondsSince1970: 0).amzDate == "19700101T000000Z")
        #expect(SigV4Timestamp(secondsSince1970: 951_868_799).amzDate == "20000229T235959Z")
        #expect(Self.time.date == "20150830")
        #expect(SigV4Timestamp(amzDate: "2015-08-30T12:36:00Z") == nil)
        #expect(SigV4Timestamp(amzDate: "20150830T1236000") == nil)
    }

    @Test func encodingKeepsOnlyUnreservedAndPathSlashes() {
        #expect(URIEncoding.path("a b/ü+=.~_-") == "a%20b/%C3%BC%2B%3D.~_-")
        #expect(URIEncoding.component("a/b c") == "a%2Fb%20c")
        #expect(SigV4Signer.canonicalQuery([("uploads", ""), ("b", "2"), ("a", "z"), ("a", "y")]) == "a=y&a=z&b=2&uploads=")
    }

    @Test func credentialsNeverDescribeTheSecret() {
        let credentials = S3Credentials(accessKeyId: "AK", secretAccessKey: "very-secret")
        #expect(!"\(credentials)".contains("very-secret"))
        #expect(!String(reflecting: credentials).contains("very-secret"))
    }
}
