import Testing
import UpCore

/// The one key rule, at each decoder that hands a key to up-server (Sources/UpCore/Auth/ObjectKeyRule.swift).
@Suite("ObjectKeyRule")
struct ObjectKeyRuleTests {
    static let longest = String(repeating: "k", count: 750)

    @Test func bounds() {
        #expect(ObjectKeyRule.allows(""))
        #expect(ObjectKeyRule.allows(Self.longest))
        #expect(Self.longest.utf8.count == 750)
        #expect(!ObjectKeyRule.allows(Self.longest + "k"))
        #expect(!ObjectKeyRule.allows(String(repeating: "七", count: 251)))   // 753 bytes, 251 characters
        #expect(!ObjectKeyRule.allows("a\u{0}b"))
        #expect(throws: UpError(.invalidKey)) { try ObjectKeyRule.check("a\u{0}") }
        #expect(UpError.Code.invalidKey.status == 400)
    }

    @Test func everyDecoderAppliesIt() throws {
        let nul = URLSafeBase64.encode("a\u{0}b".utf8)
        let tooLong = URLSafeBase64.encode((Self.longest + "k").utf8)
        for key in [nul, tooLong] {
            #expect(throws: UpError(.invalidKey)) { try MultipartPath.parse("/buckets/b/objects/\(key)/uploads") }
            #expect(throws: UpError(.invalidKey)) { try MkfilePath.parse("/mkfile/5/key/\(key)") }
        }
        let entry = URLSafeBase64.encode("b:a\u{0}b".utf8)
        #expect(throws: UpError(.invalidKey)) { try ManagementCommand.parse("/stat/\(entry)") }
        // The entry decoder `/download` shares with the commands.
        #expect(throws: UpError(.invalidKey)) { try ManagementCommand.Entry(encoded: entry) }
        #expect(try ManagementCommand.Entry(encoded: URLSafeBase64.encode("b:k".utf8)) == .init(bucket: "b", key: "k"))
        #expect(throws: UpError(.invalidKey)) { try RsMkfilePath.parse("/rs-mkfile/\(entry)/fsize/5") }
        #expect(throws: Never.self) { try MultipartPath.parse("/buckets/b/objects/\(URLSafeBase64.encode(Self.longest.utf8))/uploads") }
    }

    @Test func finalKeyAppliesItToSaveKeyToo() {
        var policy = PutPolicy(scope: "b", deadline: 5)
        #expect(throws: UpError(.invalidKey)) { try policy.finalKey(clientKey: "a\u{0}", renderedSaveKey: nil, etag: "E") }
        policy.forceSaveKey = true
        #expect(throws: UpError(.invalidKey)) {
            try policy.finalKey(clientKey: nil, renderedSaveKey: String(repeating: "s", count: 751), etag: "E")
        }
    }

    @Test func otherStoredTextRefusesNUL() {
        let fname = URLSafeBase64.encode("a\u{0}.txt".utf8)
        #expect(throws: UpError(.badRequest)) { try MkfilePath.parse("/mkfile/5/fname/\(fname)") }
        #expect(throws: UpError(.badRequest)) {
            try CompleteMultipartRequest.parse(Array(#"{"parts":[{"etag":"e","partNumber":1}],"fname":"a\u0000"}"#.utf8))
        }
        #expect(throws: UpError(.badRequest)) {
            try CompleteMultipartRequest.parse(Array(#"{"parts":[{"etag":"e","partNumber":1}],"customVars":{"x:a":"\u0000"}}"#.utf8))
        }
    }
}
