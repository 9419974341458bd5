import Testing
import UpCore

@Suite("PutPolicy")
struct PutPolicyTests {
    @Test func unknownFieldsSurviveRoundTrip() throws {
        let text = #"{"scope":"b:k","deadline":1900000000,"zeta":{"x":[1,2.5]},"callbackTimeout":10,"transform":"t","returnBody":"{\"k\":\"$(key)\"}"}"#
        let policy = try PutPolicy(jsonBytes: Array(text.utf8))
        #expect(policy.unknownFields.map(\.key) == ["zeta", "callbackTimeout", "transform"])
        #expect(policy.returnBody == #"{"k":"$(key)"}"#)
        let again = try PutPolicy(jsonBytes: Array(policy.serialized().utf8))
        #expect(again == policy)
        #expect(
            policy.serialized()
                == #"{"scope":"b:k","deadline":1900000000,"returnBody":"{\"k\":\"$(key)\"}","zeta":{"x":[1,2.5]},"callbackTimeout":10,"transform":"t"}"#
        )
    }

    @Test func serializationOrderAndEscaping() {
        var policy = PutPolicy(scope: "b", deadline: 5)
        policy.fsizeLimit = 10
        policy.callbackUrl = "http://h/cb"
        policy.endUser = "七牛"
        policy.forceSaveKey = true
        policy.keylimit = ["a", "b"]
        #expect(
            policy.serialized()
                == #"{"scope":"b","deadline":5,"endUser":"七牛","callbackUrl":"http://h/cb","forceSaveKey":true,"fsizeLimit":10,"keylimit":["a","b"]}"#
        )
    }

    @Test func bytesWrittenFromTheFieldsEqualTheJSONTree() throws {
        // serializedBytes() skips the JSONValue tree; both walk the same member list, so a
        // policy with every kind of member (unknown ones too) must come out identical.
        var policy = try PutPolicy(jsonBytes: Array(
            #"{"scope":"b:k","deadline":1900000000,"zeta":{"x":[1,2.5]},"transform":"t","n":null}"#.utf8))
        policy.isPrefixalScope = 1
        policy.insertOnly = 1
        policy.endUser = "七牛 \"u\""
        policy.returnBody = #"{"k":"$(key)"}"#
        policy.callbackUrl = "http://h/cb?bodySha1=$(bodySha1)"
        policy.callbackBody = "a=1\n&b=\u{1}"
        policy.callbackBodyType = "application/json"
        policy.saveKey = "p/$(etag)"
        policy.forceSaveKey = false
        policy.fsizeMin = 0
        policy.fsizeLimit = Int64.max
        policy.mimeLimit = "image/*"
        policy.deleteAfterDays = 3
        policy.keylimit = ["a", "\"b\""]
        policy.trafficLimit = 819200
        #expect(policy.serializedBytes() == policy.json.serializedBytes())
        #expect(try PutPolicy(jsonBytes: policy.serializedBytes()) == policy)
    }

    @Test func parsesEveryTypedField() throws {
        let text = """
            {"scope":"b:p/","deadline":1,"isPrefixalScope":1,"insertOnly":true,"endUser":"u","returnUrl":"r",
            "returnBody":"rb","callbackUrl":"cu","callbackHost":"ch","callbackBody":"cb","callbackBodyType":"application/json",
            "callbackFetchKey":1,"persistentOps":"po","persistentNotifyUrl":"pn","persistentPipeline":"pp","persistentType":2,
            "persistentWorkflowTemplateID":"w","saveKey":"sk","forceSaveKey":1,"fsizeMin":3,"fsizeLimit":4.0,"detectMime":1,
            "mimeLimit":"image/*","fileType":1,"deleteAfterDays":7,"keylimit":["p/a"],"trafficLimit":819200,"customer":null}
            """
        let policy = try PutPolicy(jsonBytes: Array(text.utf8))
        #expect(policy.isPrefixal && policy.isInsertOnly && policy.fetchesKeyFromCallback)
        #expect(policy.insertOnly == 1 && policy.forceSaveKey == true && policy.fsizeLimit == 4 && policy.fsizeMin == 3)
        #expect(policy.endUser == "u" && policy.returnUrl == "r" && policy.returnBody == "rb" && policy.callbackUrl == "cu")
        #expect(policy.callbackHost == "ch" && policy.callbackBody == "cb" && policy.callbackBodyType == "application/json")
        #expect(policy.persistentOps == "po" && policy.persistentNotifyUrl == "pn" && policy.persistentPipeline == "pp")
        #expect(policy.persistentType == 2 && policy.persistentWorkflowTemplateID == "w" && policy.saveKey == "sk")
        #expect(policy.detectMime == 1 && policy.mimeLimit == "image/*" && policy.fileType == 1)
        #expect(policy.deleteAfterDays == 7 && policy.keylimit == ["p/a"] && policy.trafficLimit == 819_200)
        #expect(policy.unknownFields.map(\.key) == ["customer"])
    }

    @Test(arguments: [
        #"[]"#, #"{"deadline":1}"#, #"{"scope":"b"}"#, #"{"scope":1,"deadline":1}"#, #"{"scope":"b","deadline":"1"}"#,
        #"{"scope":"b","deadline":1.5}"#, #"{"scope":"b","deadline":1,"fsizeLimit":"10"}"#,
        #"{"scope":"b","deadline":1,"keylimit":[1]}"#, #"{"scope":"b","deadline":1,"forceSaveKey":"yes"}"#,
    ])
    func rejectsMistypedPolicies(_ text: String) {
        #expect(throws: UpError(.invalidJSON)) { try PutPolicy(jsonBytes: Array(text.utf8)) }
    }

    @Test func deadlineBeyond2106() throws {
        let policy = try PutPolicy(jsonBytes: Array(#"{"scope":"b","deadline":5000000000}"#.utf8))
        #expect(policy.deadline == 5_000_000_000)
    }

    @Test(arguments: [
        ("mybucket", "mybucket", nil), ("mybucket:dir/a.txt", "mybucket", "dir/a.txt"), ("mybucket:", "mybucket", ""),
        ("b:a:b", "b", "a:b"),
        // Found by scripts/fuzz/libfuzzer (policy): a combining mark joins the colon in one
        // Character, and the scope key lost it.
        ("b:\u{0616}x", "b", "\u{0616}x"), ("b\u{0301}:\u{0301}", "b\u{0301}", "\u{0301}"),
    ] as [(String, String, String?)])
    func bucketAndScopeKey(scope: String, bucket: String, key: String?) {
        let policy = PutPolicy(scope: scope, deadline: 0)
        #expect(policy.bucket == bucket)
        #expect(policy.scopeKey == key)
    }

    /// The scope key keeps a leading combining mark, so the token does not authorize the bare key.
    @Test func combiningMarkAfterTheColonStaysInTheKey() {
        let policy = PutPolicy(scope: "b:\u{0301}k", deadline: 0)
        #expect(throws: UpError(.keyMismatch)) { try policy.authorize(key: "k") }
        #expect(throws: Never.self) { try policy.authorize(key: "\u{0301}k") }
    }

    @Test func keyPermissions() {
        let bucketOnly = PutPolicy(scope: "b", deadline: 0)
        #expect(throws: Never.self) { try bucketOnly.authorize(key: "anything") }
        // §1.3: bucket-only is insert-only, except v1 resumable, which overwrites unless insertOnly.
        for path in UploadKind.allCases {
            #expect(bucketOnly.allowsOverwrite(through: path) == (path == .resumableV1), "\(path)")
        }

        let exact = PutPolicy(scope: "b:k", deadline: 0)
        #expect(throws: Never.self) { try exact.authorize(key: "k") }
        #expect(throws: UpError(.keyMismatch)) { try exact.authorize(key: "k2") }
        #expect(UploadKind.allCases.allSatisfy { exact.allowsOverwrite(through: $0) })

        var prefix = PutPolicy(scope: "b:up/", deadline: 0)
        prefix.isPrefixalScope = 1
        #expect(throws: Never.self) { try prefix.authorize(key: "up/x") }
        #expect(throws: UpError(.keyMismatch)) { try prefix.authorize(key: "down/x") }
        #expect(!UploadKind.allCases.contains { prefix.allowsOverwrite(through: $0) })

        var limited = PutPolicy(scope: "b", deadline: 0)
        limited.keylimit = ["a", "b"]
        #expect(throws: Never.self) { try limited.authorize(key: "a") }
        #expect(throws: UpError(.keyNotInKeyLimit)) { try limited.authorize(key: "c") }

        let empty = PutPolicy(scope: "b:", deadline: 0)
        #expect(throws: Never.self) { try empty.authorize(key: "") }
        #expect(throws: UpError(.keyMismatch)) { try empty.authorize(key: "x") }

        var insertOnly = PutPolicy(scope: "b:k", deadline: 0)
        insertOnly.insertOnly = 1
        #expect(!UploadKind.allCases.contains { insertOnly.allowsOverwrite(through: $0) })
        var bucketInsertOnly = PutPolicy(scope: "b", deadline: 0)
        bucketInsertOnly.insertOnly = 1
        #expect(!bucketInsertOnly.allowsOverwrite(through: .resumableV1))
    }

    @Test func keysCompareAsBytesNotCanonicalEquivalence() {
        let composed = PutPolicy(scope: "b:caf\u{E9}", deadline: 0)
        #expect(throws: UpError(.keyMismatch)) { try composed.authorize(key: "cafe\u{301}") }
    }

    @Test func finalKeySelection() throws {
        var policy = PutPolicy(scope: "b", deadline: 0)
        #expect(try policy.finalKey(clientKey: nil, renderedSaveKey: nil, etag: "E") == "E")
        #expect(try policy.finalKey(clientKey: "c", renderedSaveKey: "s", etag: "E") == "c")
        #expect(try policy.finalKey(clientKey: nil, renderedSaveKey: "s", etag: "E") == "s")
        #expect(try policy.finalKey(clientKey: "", renderedSaveKey: "s", etag: "E") == "")
        policy.forceSaveKey = true
        #expect(try policy.finalKey(clientKey: "c", renderedSaveKey: "s", etag: "E") == "s")
        #expect(throws: UpError(.badRequest)) { try policy.finalKey(clientKey: "c", renderedSaveKey: nil, etag: "E") }
    }
}

@Suite("PutPolicy limits")
struct PutPolicyLimitsTests {
    @Test func sizeLimits() {
        var policy = PutPolicy(scope: "b", deadline: 0)
        #expect(throws: Never.self) { try policy.checkSize(.max) }
        policy.fsizeLimit = 10
        policy.fsizeMin = 2
        #expect(throws: Never.self) { try policy.checkSize(10) }
        #expect(throws: UpError(.fileTooLarge)) { try policy.checkSize(11) }
        #expect(throws: UpError(.fileTooLarge)) { try policy.checkSize(11, isFinal: false) }
        #expect(throws: UpError(.fileTooSmall)) { try policy.checkSize(1) }
        #expect(throws: Never.self) { try policy.checkSize(1, isFinal: false) }
    }

    static let mimeCases: [(String?, String, Bool)] = [
        (nil, "anything/at-all", true),
        ("image/*;text/plain", "image/png", true),
        ("image/*;text/plain", "IMAGE/JPEG", true),
        ("image/*;text/plain", "text/plain; charset=utf-8", true),
        ("image/*;text/plain", "text/html", false),
        ("image/*;text/plain", "imagex/png", false),
        ("!application/json;text/plain", "application/json", false),
        ("!application/json;text/plain", "image/png", true),
        ("!image/*", "image/gif", false),
        // A combining mark after `;` must not hide the type from a deny-list (split by byte).
        ("!image/png", "image/png;\u{301}x", false),
        ("image/png", "image/png;\u{301}x", true),
    ]

    @Test(arguments: mimeCases)
    func mimeLimit(limit: String?, type: String, allowed: Bool) {
        var policy = PutPolicy(scope: "b", deadline: 0)
        policy.mimeLimit = limit
        if allowed {
            #expect(throws: Never.self) { try policy.checkMimeType(type) }
        } else {
            #expect(throws: UpError(.limitedMimeType)) { try policy.checkMimeType(type) }
        }
    }
}
