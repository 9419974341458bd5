import Testing
import UpCore

@Suite("MagicVariables")
struct MagicVariablesTests {
    /// A key with `&`, `=`, a quote, a slash and non-ASCII: it must not break any template style.
    static let awkwardKey = #"photos/a&b=七牛 "q".jpg"#

    static var variables: MagicVariables {
        var variables = MagicVariables(
            bucket: "mybucket", key: awkwardKey, etag: "Fqr0xh3cxeii2r7eDztILNmuqUNN", fsize: 5, mimeType: "image/jpeg",
            fname: "gogopher.jpg", endUser: "user-42", customVariables: [("x:name", "七牛&co")], uploadTime: 1_900_000_000,
            uuid: "8f1c")
        variables.persistentId = nil
        return variables
    }

    @Test func jsonTemplateWithVariablesInsideStrings() throws {
        // §10.1 (b) returnBody: the Java/Python style.
        let template = #"{"key":"$(key)","hash":"$(etag)","fsize":$(fsize),"bucket":"$(bucket)"}"#
        let rendered = Self.variables.renderJSON(template)
        #expect(
            rendered
                == #"{"key":"photos/a&b=七牛 \"q\".jpg","hash":"Fqr0xh3cxeii2r7eDztILNmuqUNN","fsize":5,"bucket":"mybucket"}"#)
        #expect(try JSONValue.parse(rendered)["key"] == .string(Self.awkwardKey))
    }

    @Test func jsonTemplateWithBareVariables() throws {
        // §10.1 (d), the official docs' style: bare variables become JSON values; unknown → null.
        let template = #"{"name":$(fname),"size":$(fsize),"w":$(imageInfo.width),"h":$(imageInfo.height),"hash":$(etag)}"#
        let rendered = Self.variables.renderJSON(template)
        #expect(rendered == #"{"name":"gogopher.jpg","size":5,"w":null,"h":null,"hash":"Fqr0xh3cxeii2r7eDztILNmuqUNN"}"#)
        var withInfo = Self.variables
        withInfo.mediaInfo = ["imageInfo": .object([("width", .int(640)), ("height", .int(480))])]
        #expect(
            withInfo.renderJSON(template)
                == #"{"name":"gogopher.jpg","size":5,"w":640,"h":480,"hash":"Fqr0xh3cxeii2r7eDztILNmuqUNN"}"#)
        _ = try JSONValue.parse(rendered)
    }

    @Test func jsonTemplateBothStylesAndBraces() throws {
        let template = #"{"k":${key},"n":"${x:name}","missing":"$(x:nope)","bare":$(x:nope),"esc":"\"$(fsize)\"","u":$(uuid)}"#
        let rendered = Self.variables.renderJSON(template)
        #expect(
            rendered
                == #"{"k":"photos/a&b=七牛 \"q\".jpg","n":"七牛&co","missing":"","bare":null,"esc":"\"5\"","u":"8f1c"}"#)
        _ = try JSONValue.parse(rendered)
    }

    @Test func formTemplatePercentEncodesValues() throws {
        // §10.1 (b) callbackBody.
        let template = "key=$(key)&hash=$(etag)&fsize=$(fsize)&bucket=$(bucket)&name=$(x:name)&none=$(x:nope)"
        let rendered = Self.variables.renderForm(template)
        #expect(
            rendered
                == "key=photos%2Fa%26b%3D%E4%B8%83%E7%89%9B%20%22q%22.jpg&hash=Fqr0xh3cxeii2r7eDztILNmuqUNN&fsize=5"
                + "&bucket=mybucket&name=%E4%B8%83%E7%89%9B%26co&none=")
        let pairs = try #require(FormURLEncoding.parse(Array(rendered.utf8)))
        #expect(pairs.map(\.name) == ["key", "hash", "fsize", "bucket", "name", "none"])
        #expect(pairs[0].value == Self.awkwardKey)
        #expect(pairs[4].value == "七牛&co")
    }

    @Test func saveKeyGetsTimePartsInUTCPlus8() {
        // 1_900_000_000 = 2030-03-17T17:46:40Z = 2030-03-18 01:46:40 in UTC+8.
        let rendered = Self.variables.renderSaveKey("up/$(year)/$(mon)/$(day)/$(hour)$(min)$(sec)/$(etag)$(ext)-$(uuid)")
        #expect(rendered == "up/2030/03/18/014640/Fqr0xh3cxeii2r7eDztILNmuqUNN.jpg-")
    }

    @Test func timePartsAreNotAvailableInBodies() {
        #expect(Self.variables.renderJSON(#"{"y":"$(year)","z":$(year)}"#) == #"{"y":"","z":null}"#)
    }

    @Test func fileNameParts() {
        var variables = Self.variables
        #expect(variables.renderSaveKey("$(fprefix)|$(ext)|$(endUser)|$(mimeType)") == "gogopher|.jpg|user-42|image/jpeg")
        variables.fname = "a.tar.gz"
        #expect(variables.renderSaveKey("$(fprefix)|$(ext)") == "a.tar|.gz")
        variables.fname = nil
        #expect(variables.renderSaveKey("[$(fname)]$(fprefix)|$(ext)") == "[]|.jpg")
        variables.mimeType = "application/x-unknown"
        #expect(variables.renderSaveKey("$(ext)") == "")
        variables.ext = ".bin"
        #expect(variables.renderSaveKey("$(ext)") == ".bin")
    }

    @Test func hashIsAnAliasOfEtag() {
        #expect(Self.variables.renderSaveKey("$(hash)") == "Fqr0xh3cxeii2r7eDztILNmuqUNN")
    }

    @Test(arguments: ["$", "$(", "$(key", "cost $5", "$(a b)", "$[key]", "${key)"])
    func malformedReferencesAreLiteral(_ template: String) {
        #expect(Self.variables.renderSaveKey(template) == template)
    }

    @Test func callbackURLBodySha1() {
        let url = MagicVariables.renderCallbackURL("http://h/cb?sha=$(bodySha1)&k=$(key)", body: Array("key=a".utf8))
        #expect(url == "http://h/cb?sha=800aedaa51076f9cda76bb9943480a9e3fd08b77&k=$(key)")
    }

    /// Found by scripts/fuzz/libfuzzer (variables): "\r\n" is one Character, so the Character
    /// list of name breakers missed a lone "\n" or "\r" and `$(a\nb)` was a variable.
    @Test func lineBreaksEndAVariableName() {
        for template in ["$(a\nb)", "$(a\rb)", "$(a\r\nb)", "${x:\"\u{0301})"] {
            #expect(Self.variables.renderSaveKey(template) == template)
        }
        #expect(Self.variables.renderSaveKey("$(key)\n$(key)") == Self.awkwardKey + "\n" + Self.awkwardKey)
    }

    /// Found by scripts/fuzz/libfuzzer (variables): `${name}` came back as `$(name)`, so the
    /// callback went to another URL than the policy's.
    @Test func callbackURLKeepsOtherReferencesAsWritten() {
        let template = "http://h/cb?a=${key}&b=$(x:y)&c=${bodySha1}&d=$(e"
        let url = MagicVariables.renderCallbackURL(template, body: Array("key=a".utf8))
        #expect(url == "http://h/cb?a=${key}&b=$(x:y)&c=800aedaa51076f9cda76bb9943480a9e3fd08b77&d=$(e")
    }
}
