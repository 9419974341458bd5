// Magic and custom variables (`MagicVariables`): the template scanner and the three renderers.
//
// Input: fields template, key, fname, mimeType, x:v value, endUser, media JSON; then fsize
// (8 bytes), upload time (4 bytes, unsigned: 1970…2106) and a flags byte.
// Checked: a template that is valid JSON renders to valid JSON; known variables render to
// exactly their values in JSON, form and saveKey templates; renderCallbackURL leaves everything
// but $(bodySha1) as written; scanned variable names hold none of the characters that end a name.
@testable import UpCore

enum VariablesTarget {
    /// What ends a variable name (MagicVariables.scan): quote, backslash, `$`, brackets, whitespace.
    static let nameBreakers: Set<Unicode.Scalar> = ["\"", "\\", "$", "(", ")", "{", "}", " ", "\t", "\r", "\n"]

    static func run(_ data: [UInt8]) {
        var input = FuzzInput(data)
        let template = input.text()
        let key = input.text()
        let fname = input.text()
        let mimeType = input.text()
        let xValue = input.text()
        let endUser = input.text()
        let media = input.field()
        let fsize = input.int64()
        let uploadTime = Int64(input.uint32())
        let flags = input.byte()

        var variables = MagicVariables(
            bucket: "demo", key: key, etag: "Fqr0xh3cxeii2r7eDztILNmuqUNN", fsize: fsize, mimeType: mimeType,
            fname: flags & 1 != 0 ? fname : nil, endUser: flags & 2 != 0 ? endUser : nil,
            customVariables: [("x:v", xValue), ("x:k", key)], uploadTime: uploadTime,
            uuid: flags & 4 != 0 ? "0b2f6c3e-8c1d-4f4e-9a59-3d1c2e5f6a7b" : nil)
        if flags & 8 != 0 { variables.persistentId = endUser }
        if flags & 16 != 0 { variables.ext = fname }
        if let json = try? JSONValue.parse(media) { variables.mediaInfo["imageInfo"] = json }

        MagicVariables.scan(template) { piece in
            if case .variable(let name, _) = piece {
                require(
                    !name.unicodeScalars.contains(where: nameBreakers.contains),
                    "variable name \(show(name)) scanned from \(show(template))")
            }
        }

        let rendered = variables.renderJSON(template)
        if (try? JSONValue.parse(template)) != nil {
            require(
                (try? JSONValue.parse(rendered)) != nil,
                "JSON template \(show(template)) rendered to invalid JSON \(show(rendered))")
        }
        _ = variables.renderForm(template)
        _ = variables.renderSaveKey(template)
        if !template.contains("$") {
            require(variables.renderSaveKey(template) == template, "saveKey without variables changed")
            require(variables.renderForm(template) == template, "form template without variables changed")
        }
        let url = MagicVariables.renderCallbackURL(template, body: Array(xValue.utf8))
        if !template.contains("bodySha1") {
            require(url == template, "renderCallbackURL changed \(show(template)) to \(show(url))")
        }

        // Known variables render to exactly their values.
        let json = variables.renderJSON(#"{"k":"$(key)","s":$(fsize),"v":$(x:v),"e":"${ext}","f":"$(fname)"}"#)
        let expected: JSONValue = .object([
            ("k", .string(key)), ("s", .int(fsize)), ("v", .string(xValue)), ("e", .string(variables.resolvedExt)),
            ("f", .string(variables.fname ?? "")),
        ])
        require((try? JSONValue.parse(json)) == expected, "JSON rendering of known variables: \(show(json))")
        let form = variables.renderForm("k=$(key)&f=$(fname)&v=${x:v}&m=$(mimeType)&u=$(endUser)")
        let pairs = FormURLEncoding.parse(Array(form.utf8)) ?? []
        require(
            pairs.map(\.name) == ["k", "f", "v", "m", "u"]
                && pairs.map(\.value) == [key, variables.fname ?? "", xValue, mimeType, variables.endUser ?? ""],
            "form rendering of known variables: \(show(form))")
        require(variables.renderSaveKey("$(x:k)/$(key)") == key + "/" + key, "saveKey rendering of the key")
        let stamp = variables.renderSaveKey("$(year)$(mon)$(day)T$(hour)$(min)$(sec)Z")
        require(
            QiniuDate.parse(stamp) == uploadTime + 8 * 3_600,
            "saveKey time parts \(show(stamp)) for upload time \(uploadTime)")
    }

    static func seeds(_ vectors: Vectors) -> [[UInt8]] {
        var templates = [
            #"{"key":"$(key)","hash":"$(etag)","w":$(imageInfo.width),"x":"$(x:v) \"$(fname)\\","p":$(persistentId)}"#,
            "$(year)/$(mon)/$(day)/$(fprefix)-${uuid}$(ext) $ (x) $(a$(b) ${bodySha1}",
            "http://127.0.0.1:8080/callback?h=$(bodySha1)&k=$(key)",
        ]
        for group in vectors.groups(prefix: "uptoken_") {
            guard let json = group["policy_json"]?.stringValue, let policy = try? JSONValue.parse(json) else { continue }
            for name in ["callbackBody", "returnBody", "saveKey", "callbackUrl"] {
                if let template = policy[name]?.stringValue { templates.append(template) }
            }
        }
        return templates.enumerated().map { index, template in
            input {
                $0.field(template); $0.field("photos/cat \"1\".jpg"); $0.field("cat.JPG"); $0.field("image/jpeg")
                $0.field("七牛"); $0.field("user-42"); $0.field(#"{"width":640,"exif":{"a":[1]}}"#)
                $0.int64(5); $0.uint32(1_764_000_000); $0.byte(UInt8(index * 7 % 32))
            }
        }
    }
}
