import HTTPTransport
import ObjectStorage
import Testing
import TestSupport

/// The closed error table, produced by a real store: each S3 failure the blob store branches on.
@Suite("S3 errors on SeaweedFS")
struct S3ClientErrorTests {
    @Test func missingKeysAndBuckets() async throws {
        let client = try await freshClient()
        let get = await s3Error { _ = try await client.getObject("missing") }
        #expect(get?.kind == .notFound)
        #expect(get?.code == "NoSuchKey")
        let head = await s3Error { _ = try await client.headObject("missing") }
        #expect(head?.kind == .notFound)
        #expect(head?.status == 404)
        let store = try await SeaweedFS.shared()
        let other = try S3Client(
            settings: S3Settings(
                endpoint: store.endpoint, bucket: SeaweedFS.uniqueBucket("absent"),
                credentials: S3Credentials(accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey)),
            transport: try CurlTransport())
        #expect(await s3Error { try await other.headBucket() }?.kind == .notFound)
        try await client.headBucket()
        try await client.createBucket()
    }

    @Test func wrongSecretIsAccessDenied() async throws {
        let good = try await freshClient()
        _ = try await good.putObject("x", body: .bytes([1]))
        let bad = try S3Client(
            settings: S3Settings(
                endpoint: good.settings.endpoint, bucket: good.settings.bucket,
                credentials: S3Credentials(accessKeyId: good.settings.credentials.accessKeyId, secretAccessKey: "not-the-secret")),
            transport: try CurlTransport())
        let error = await s3Error { _ = try await bad.getObject("x") }
        #expect(error?.kind == .accessDenied)
        #expect(error?.code == "SignatureDoesNotMatch")
        #expect(error?.isRetryable == false)
        #expect(error.map { "\($0)".contains("not-the-secret") } == false)
    }

    @Test func conditionalRequests() async throws {
        let client = try await freshClient()
        let etag = try await client.putObject("once", body: .bytes([1]), onlyIfAbsent: true)
        let again = await s3Error { _ = try await client.putObject("once", body: .bytes([2]), onlyIfAbsent: true) }
        #expect(again?.kind == .preconditionFailed)
        #expect(try await client.getObject("once").body.collect(upTo: 8) == [1])
        #expect(try await client.getObject("once", ifMatch: etag).body.collect(upTo: 8) == [1])
        #expect(await s3Error { _ = try await client.getObject("once", ifMatch: "0123") }?.kind == .preconditionFailed)
    }

    @Test func storeStoppedMidTestIsUnavailable() async throws {
        let store = try await SeaweedFS.start()
        let client = try await freshClient(store)
        _ = try await client.putObject("before", body: .bytes([1, 2, 3]))
        let download = try await client.getObject("before")
        #expect(try await download.body.collect(upTo: 8) == [1, 2, 3])
        await store.stop()
        #expect(!store.isRunning)
        let error = await s3Error { _ = try await client.getObject("before") }
        #expect(error?.kind == .unavailable)
        #expect(error?.isRetryable == true)
        let put = await s3Error { _ = try await client.putObject("after", body: .stream(Pattern.stream(0..<(1 << 20)))) }
        #expect(put?.kind == .unavailable)
    }
}
