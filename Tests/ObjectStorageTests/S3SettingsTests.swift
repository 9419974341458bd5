import Basics
import HTTPTransport
@testable import ObjectStorage
import Testing

/// Settings validation, the environment's key pair, and the two addressing styles.
@Suite("S3 settings")
struct S3SettingsTests {
    static let keys = S3Credentials(accessKeyId: "AK", secretAccessKey: "SK")

    @Test(arguments: [
        ("ftp://host", "upgate", "blobStore.endpoint"), ("http://host/path", "upgate", "blobStore.endpoint"),
        ("http://host:8333", "Upgate_Bucket", "blobStore.bucket"), ("http://host:8333", "ab", "blobStore.bucket"),
    ])
    func invalidSettingsNameTheKey(endpoint: String, bucket: String, key: String) {
        let settings = S3Settings(endpoint: endpoint, bucket: bucket, credentials: Self.keys)
        #expect(throws: ConfigurationError.self) { try settings.validate() }
        do { try settings.validate() } catch { #expect(error.description.hasPrefix(key)) }
    }

    @Test func missingSecretsPointAtTheEnvironment() throws {
        let settings = S3Settings(endpoint: "http://127.0.0.1:8333", bucket: "upgate", credentials: S3Credentials(accessKeyId: "", secretAccessKey: ""))
        do { try settings.validate(); Issue.record("accepted empty keys") } catch {
            #expect(error.description.contains("UPGATE_S3_ACCESS_KEY_ID"))
        }
        let fromEnvironment = settings.applyingEnvironment([
            "UPGATE_S3_ACCESS_KEY_ID": "env-ak", "UPGATE_S3_SECRET_ACCESS_KEY": "env-sk",
        ])
        #expect(fromEnvironment.credentials == S3Credentials(accessKeyId: "env-ak", secretAccessKey: "env-sk"))
        try fromEnvironment.validate()
        #expect(settings.applyingEnvironment(["UPGATE_S3_ACCESS_KEY_ID": "only-one"]).credentials == settings.credentials)
    }

    @Test func pathAndVirtualHostAddressing() throws {
        let path = try S3Client(
            settings: S3Settings(endpoint: "http://127.0.0.1:8333/", bucket: "upgate", credentials: Self.keys), transport: try CurlTransport())
        #expect(path.hostAndPath(key: "a b/c") == ("127.0.0.1:8333", "/upgate/a%20b/c"))
        #expect(path.hostAndPath(key: nil) == ("127.0.0.1:8333", "/upgate"))
        let virtual = try S3Client(
            settings: S3Settings(endpoint: "https://s3.eu-west-3.amazonaws.com", bucket: "upgate", credentials: Self.keys, addressing: .virtualHost),
            transport: try CurlTransport())
        #expect(virtual.hostAndPath(key: "a b/c") == ("upgate.s3.eu-west-3.amazonaws.com", "/a%20b/c"))
        #expect(virtual.hostAndPath(key: nil) == ("upgate.s3.eu-west-3.amazonaws.com", "/"))
    }

    @Test func xmlReaderHandlesWhatStoresSend() throws {
        let document = Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- a comment -->
            <s3:ListBucketResult xmlns:s3="http://s3.amazonaws.com/doc/2006-03-01/"><s3:Name>b</s3:Name>
            <Contents><Key>a &amp; b &lt;c&gt; &#x1F600; &#65;</Key><Size>5</Size></Contents><Empty/><Contents><Key><![CDATA[x<y]]></Key></Contents>
            </s3:ListBucketResult>
            """.utf8)
        let root = try #require(S3XML.parse(document))
        #expect(root.name == "ListBucketResult")
        #expect(root.text(of: "Name") == "b")
        #expect(root.children("Contents").map { $0.text(of: "Key") } == ["a & b <c> 😀 A", "x<y"])
        #expect(root.child("Empty") != nil)
        for broken in ["<a><b></a>", "<a>", "", "<a></b>", "<?xml"] {
            #expect(S3XML.parse(Array(broken.utf8)) == nil, "\(broken)")
        }
        let error = S3Error.from(status: 404, body: Array("<Error><Code>NoSuchKey</Code><Message>gone</Message></Error>".utf8))
        #expect(error.kind == .notFound && error.code == "NoSuchKey" && error.message == "gone")
        #expect(S3Error.from(status: 503, body: []).kind == .slowDown)
        #expect(S3Error.from(status: 503, body: []).isRetryable)
        #expect(S3Error.from(status: 400, body: Array("<Error><Code>InvalidPart</Code></Error>".utf8)).kind == .rejected)
    }
}
