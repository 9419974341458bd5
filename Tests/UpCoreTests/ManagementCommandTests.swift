import Testing
import UpCore

/// `ManagementCommand.parse` on the paths the Python SDK's `BucketManager` and `build_batch_*`
/// write (entries: `entry('demo', 'dir/a.txt')` = `ZGVtbzpkaXIvYS50eHQ=`).
@Suite("ManagementCommand")
struct ManagementCommandTests {
    let a = ManagementCommand.Entry(bucket: "demo", key: "dir/a.txt")
    let b = ManagementCommand.Entry(bucket: "other", key: "b")
    let encodedA = EncodedEntryURI.encode(bucket: "demo", key: "dir/a.txt")
    let encodedB = EncodedEntryURI.encode(bucket: "other", key: "b")

    @Test func parsesEveryVerbAsRequestAndAsBatchOp() throws {
        #expect(encodedA == "ZGVtbzpkaXIvYS50eHQ=")
        #expect(try ManagementCommand.parse("/stat/\(encodedA)") == .stat(a))
        #expect(try ManagementCommand.parse("delete/\(encodedA)") == .delete(a))
        #expect(try ManagementCommand.parse("/move/\(encodedA)/\(encodedB)/force/false") == .move(from: a, to: b, force: false))
        #expect(try ManagementCommand.parse("copy/\(encodedA)/\(encodedB)/force/true") == .copy(from: a, to: b, force: true))
        #expect(try ManagementCommand.parse("copy/\(encodedA)/\(encodedB)") == .copy(from: a, to: b, force: false))
        // `%3D` padding, as a client that percent-encodes the path sends it.
        #expect(try ManagementCommand.parse("/delete/ZGVtbzpkaXIvYS50eHQ%3D") == .delete(a))
        let mime = URLSafeBase64.encode("text/plain".utf8), red = URLSafeBase64.encode("red".utf8)
        #expect(try ManagementCommand.parse("/chgm/\(encodedA)/mime/\(mime)/x-qn-meta-color/\(red)")
            == .changeMime(a, mimeType: "text/plain", metadata: ["x-qn-meta-color": "red"]))
        #expect(try ManagementCommand.parse("/chgm/\(encodedA)/x-qn-meta-color/\(red)")
            == .changeMime(a, mimeType: nil, metadata: ["x-qn-meta-color": "red"]))
        #expect(try ManagementCommand.parse("/deleteAfterDays/\(encodedA)/7") == .deleteAfterDays(a, days: 7))
        #expect(try ManagementCommand.parse("/deleteAfterDays/\(encodedA)/0") == .deleteAfterDays(a, days: nil))
    }

    @Test(arguments: [
        "/chtype/ZGVtbzpkaXIvYS50eHQ=/type/1", "/stat", "/stat/ZGVtbw==", "/stat/%%%", "/stat/ZGVtbzpk/extra",
        "/move/ZGVtbzpkaXIvYS50eHQ=", "/move/ZGVtbzpkaXIvYS50eHQ=/b3RoZXI6Yg==/force/yes",
        "/deleteAfterDays/ZGVtbzpkaXIvYS50eHQ=/-1", "/deleteAfterDays/ZGVtbzpkaXIvYS50eHQ=",
        "/chgm/ZGVtbzpkaXIvYS50eHQ=/mime", "/chgm/ZGVtbzpkaXIvYS50eHQ=/cond/ZnNpemU9Ng==",
        "/chgm/ZGVtbzpkaXIvYS50eHQ=/x-qn-meta-/cmVk", "/chgm/ZGVtbzpkaXIvYS50eHQ=/x-qn-meta-a.b/cmVk",
        "/chgm/ZGVtbzpkaXIvYS50eHQ=/mime/JTBB",
    ])
    func refusesWhatItDoesNotKnowWith400(path: String) {
        #expect(throws: UpError(.badRequest)) { try ManagementCommand.parse(path) }
    }
}
