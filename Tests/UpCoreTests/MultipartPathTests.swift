import Testing
import UpCore

@Suite("MultipartPath")
struct MultipartPathTests {
    /// §10.6 shapes.
    @Test func parsesTheSDKShapes() throws {
        #expect(try MultipartPath.parse("/buckets/mybucket/objects/ZGlyL2EudHh0/uploads")
            == MultipartPath(bucket: "mybucket", key: "dir/a.txt", resource: .uploads))
        #expect(try MultipartPath.parse("/buckets/mybucket/objects/~/uploads")
            == MultipartPath(bucket: "mybucket", key: nil, resource: .uploads))
        let part = try MultipartPath.parse("/buckets/mybucket/objects/ZGlyL2EudHh0/uploads/UPID/3")
        #expect(part.resource == .part(uploadID: "UPID", partNumber: 3) && part.uploadID == "UPID")
        #expect(part.path == "/buckets/mybucket/objects/ZGlyL2EudHh0/uploads/UPID/3")
        let complete = try MultipartPath.parse("/buckets/mybucket/objects/ZGlyL2EudHh0/uploads/UPID?max-parts=5")
        #expect(complete.resource == .upload(id: "UPID"))
    }

    @Test func unpaddedKeyAndEmptyKey() throws {
        #expect(try MultipartPath.parse("/buckets/b/objects/aw/uploads").key == "k")
        #expect(try MultipartPath.parse("/buckets/b/objects//uploads").key == "")
    }

    @Test func roundTrips() throws {
        for value in [
            MultipartPath(bucket: "b", key: "七牛/a b", resource: .part(uploadID: "id-1", partNumber: 10_000)),
            MultipartPath(bucket: "b", key: nil, resource: .upload(id: "x")),
        ] {
            #expect(try MultipartPath.parse(value.path) == value)
        }
    }

    @Test(
        "Malformed is 400",
        arguments: [
            "/buckets//objects/~/uploads", "/buckets/b/object/~/uploads", "/buckets/b/objects/~", "/buckets/b/objects/!/uploads",
            "/buckets/b/objects/~/uploads/", "/buckets/b/objects/~/uploads/id/0", "/buckets/b/objects/~/uploads/id/10001",
            "/buckets/b/objects/~/uploads/id/1/x", "/buckets/b/objects/~/uploads/id/one",
        ])
    func rejects(path: String) {
        #expect(throws: UpError(.badRequest)) { try MultipartPath.parse(path) }
    }
}
