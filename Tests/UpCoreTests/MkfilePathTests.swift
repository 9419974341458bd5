import Testing
import UpCore

@Suite("MkfilePath")
struct MkfilePathTests {
    /// §10.6: what the Python SDK builds.
    static let sdkPath =
        "/mkfile/9437189/mimeType/dmlkZW8vbXA0/key/ZGlyL-S4g-eJmy5tcDQ=/fname/5LiD54mbLm1wNA==/x:uid/NDI=/x:empty//x-qn-meta-color/cmVk"

    @Test func parsesThePythonSDKPath() throws {
        let mkfile = try MkfilePath.parse(Self.sdkPath)
        #expect(mkfile.fsize == 9_437_189)
        #expect(mkfile.mimeType == "video/mp4")
        #expect(mkfile.key == "dir/七牛.mp4")
        #expect(mkfile.fname == "七牛.mp4")
        #expect(mkfile.customVariables.map(\.name) == ["x:uid", "x:empty"])
        #expect(mkfile.customVariables.map(\.value) == ["42", ""])
        #expect(mkfile.metadata.map(\.name) == ["x-qn-meta-color"] && mkfile.metadata.map(\.value) == ["red"])
        #expect(mkfile.path == Self.sdkPath)
    }

    @Test func pairsInAnyOrderWithEmptyValueLast() throws {
        let mkfile = try MkfilePath.parse("/mkfile/5/x:b/Yg/key/aw==/x:a/")
        #expect(mkfile == MkfilePath(fsize: 5, key: "k", customVariables: [("x:b", "b"), ("x:a", "")]))
        #expect(try MkfilePath.parse("/mkfile/0") == MkfilePath(fsize: 0))
        #expect(try MkfilePath.parse("/mkfile/7?x=1") == MkfilePath(fsize: 7))
    }

    @Test func emptyKeyIsSuppliedEmptyKey() throws {
        #expect(try MkfilePath.parse("/mkfile/5/key/").key == "")
        #expect(try MkfilePath.parse("/mkfile/5").key == nil)
    }

    @Test func percentEncodedNamesAndPaddingAreAccepted() throws {
        let mkfile = try MkfilePath.parse("/mkfile/5/x%3Auid/NDI%3D/key/YS9i")
        #expect(mkfile.customVariables.map(\.name) == ["x:uid"] && mkfile.customVariables.map(\.value) == ["42"])
        #expect(mkfile.key == "a/b")
    }

    /// Found with the query property of scripts/fuzz/libfuzzer (paths): the query was cut at the first "?" Character,
    /// and a "?" joined to a combining mark after it, or to U+0600 before it, is not one.
    @Test func queryIsCutAtTheFirstQuestionMarkByte() throws {
        #expect(try MkfilePath.parse("/mkfile/5/foo/bar\u{0600}?a=b/c") == MkfilePath.parse("/mkfile/5/foo/bar\u{0600}"))
        #expect(try MkfilePath.parse("/mkfile/5/key/aGVsbG8udHh0?\u{0301}/x").key == "hello.txt")
    }

    @Test func unknownNamesAreIgnored() throws {
        // The Python SDK copies non-x: params verbatim (§6).
        let mkfile = try MkfilePath.parse("/mkfile/5/y/!!not-b64/x:/Zm9v/x-qn-meta-/Zm9v/key/aw==")
        #expect(mkfile == MkfilePath(fsize: 5, key: "k"))
    }

    @Test func roundTripsThroughPath() throws {
        let value = MkfilePath(
            fsize: 12, key: "a b/c?d", fname: "f,1.txt", mimeType: "text/plain",
            customVariables: [("x:名", "值"), ("x:e", "")], metadata: [("x-qn-meta-a", "1")])
        #expect(try MkfilePath.parse(value.path) == value)
    }

    static let rejections: [(String, String)] = [
        ("/mkfile/", "fsize"),
        ("/mkfile/-1", "fsize"),
        ("/mkfile/+5", "fsize"),
        ("/mkfile/1e3", "fsize"),
        ("/mkfile/9999999999999999999", "fsize"),
        ("/mkfile/5/key", "no value"),
        ("/mkfile/5/key/aw==/", "no value"),
        ("/mkfile/5/key/!!", "key"),
        ("/mkfile/5/fname/_w==", "fname"),  // 0xFF: not UTF-8
        ("/mkfile/5/key/aw==/key/aw==", "twice"),
        ("/mkfile/5/x:a/YQ==/x%3Aa/YQ==", "twice"),
        ("/mkfile/5/x:a/%ZZ", "percent"),
        ("/mkblk/5", "/mkfile/"),
    ]

    @Test("Malformed paths are 400 with a detail naming the problem", arguments: rejections)
    func rejects(path: String, detail: String) {
        let error = #expect(throws: UpError(.badRequest)) { try MkfilePath.parse(path) }
        #expect(error?.detail.contains(detail) == true, "\(error?.detail ?? "")")
    }
}
