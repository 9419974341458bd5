// qiniu-protocol.md §1.1, §1.3: reading and writing the policy JSON.

extension PutPolicy {
    /// Decodes a policy from its JSON text (the bytes inside an `encodedPolicy`).
    ///
    /// Lenient where SDKs differ (§1.3): integer fields also accept `true`/`false` (1/0) and
    /// integral floating-point numbers; ``forceSaveKey`` accepts a bool or an integer (non-zero
    /// = true); `null` counts as "not set". A documented field of an impossible type (e.g. a
    /// string `fsizeLimit`) is an error rather than silently ignored, so a limit can never be
    /// dropped by accident.
    ///
    /// - Parameter bytes: UTF-8 JSON text.
    /// - Throws: ``UpError`` `.invalidJSON` for bad JSON, a non-object, a missing or mistyped
    ///   `scope`/`deadline`, or a mistyped known field.
    public init(jsonBytes bytes: some Collection<UInt8>) throws(UpError) {
        try self.init(json: try JSONValue.parse(bytes))
    }

    /// Decodes a policy from a parsed JSON value; see ``init(jsonBytes:)``.
    ///
    /// - Parameter json: Must be an object.
    /// - Throws: ``UpError`` `.invalidJSON`.
    public init(json: JSONValue) throws(UpError) {
        guard case .object(let members) = json else {
            throw UpError(.invalidJSON, detail: "policy is not a JSON object")
        }
        guard let scope = json["scope"]?.stringValue else { throw UpError(.invalidJSON, detail: "policy has no scope") }
        guard let deadlineValue = json["deadline"], let deadline = Self.integer(deadlineValue) else {
            throw UpError(.invalidJSON, detail: "policy has no integer deadline")
        }
        self.init(scope: scope, deadline: deadline)
        // Duplicate names: the last value wins, as in Python and Go (JSONValue subscript
        // semantics); an unknown name keeps the position of its first occurrence, like a Python dict.
        for (key, value) in members {
            try assign(key, value)
        }
    }

    /// Compact JSON for signing: `scope`, `deadline`, the other set fields in the order of
    /// §1.3's table, then ``unknownFields`` in order; `/` not escaped, non-ASCII as raw UTF-8.
    ///
    /// Any valid serialization is fine: the HMAC covers the base64 of the exact text produced
    /// here, and verifiers never re-serialize (§1.1). So this need not match Python's
    /// `ensure_ascii` output byte for byte.
    public func serialized() -> String { String(decoding: serializedBytes(), as: UTF8.self) }

    /// ``serialized()`` as UTF-8 bytes, written straight from the fields (no ``JSONValue`` tree
    /// in between: this runs for every token biz-server signs). Byte for byte the same as
    /// `json.serialized()`; both walk ``forEachMember(_:)``.
    public func serializedBytes() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(512)
        output.append(UInt8(ascii: "{"))
        var first = true
        forEachMember { key, value in
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            JSONValue.writeString(key, to: &output)
            output.append(UInt8(ascii: ":"))
            switch value {
            case .string(let text): JSONValue.writeString(text, to: &output)
            case .int(let number): output.append(contentsOf: String(number).utf8)
            case .other(let json): json.write(to: &output)
            }
        }
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// The policy as an ordered JSON object (the same member order as ``serialized()``).
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        forEachMember { key, value in
            switch value {
            case .string(let text): members.append((key, .string(text)))
            case .int(let number): members.append((key, .int(number)))
            case .other(let json): members.append((key, json))
            }
        }
        return .object(members)
    }

    /// A member's value: the two common kinds without a ``JSONValue`` around them.
    private enum Member {
        case string(String)
        case int(Int64)
        case other(JSONValue)
    }

    /// The set members in serialization order: `scope`, `deadline`, the other set fields in the
    /// order of §1.3's table, then ``unknownFields`` in order. The one place that order lives.
    private func forEachMember(_ body: (String, Member) -> Void) {
        body("scope", .string(scope))
        body("deadline", .int(deadline))
        func add(_ key: String, _ value: String?) { if let value { body(key, .string(value)) } }
        func add(_ key: String, _ value: Int?) { if let value { body(key, .int(Int64(value))) } }
        func add(_ key: String, _ value: Int64?) { if let value { body(key, .int(value)) } }
        add("isPrefixalScope", isPrefixalScope)
        add("insertOnly", insertOnly)
        add("endUser", endUser)
        add("returnUrl", returnUrl)
        add("returnBody", returnBody)
        add("callbackUrl", callbackUrl)
        add("callbackHost", callbackHost)
        add("callbackBody", callbackBody)
        add("callbackBodyType", callbackBodyType)
        add("callbackFetchKey", callbackFetchKey)
        add("persistentOps", persistentOps)
        add("persistentNotifyUrl", persistentNotifyUrl)
        add("persistentPipeline", persistentPipeline)
        add("persistentType", persistentType)
        add("persistentWorkflowTemplateID", persistentWorkflowTemplateID)
        add("saveKey", saveKey)
        if let forceSaveKey { body("forceSaveKey", .other(.bool(forceSaveKey))) }
        add("fsizeMin", fsizeMin)
        add("fsizeLimit", fsizeLimit)
        add("detectMime", detectMime)
        add("mimeLimit", mimeLimit)
        add("fileType", fileType)
        add("deleteAfterDays", deleteAfterDays)
        if let keylimit { body("keylimit", .other(.array(keylimit.map { .string($0) }))) }
        add("trafficLimit", trafficLimit)
        for (key, value) in unknownFields { body(key, .other(value)) }
    }

    private mutating func assign(_ key: String, _ value: JSONValue) throws(UpError) {
        switch key {
        case "scope", "deadline": break
        case "isPrefixalScope": isPrefixalScope = try int(key, value)
        case "insertOnly": insertOnly = try int(key, value)
        case "endUser": endUser = try string(key, value)
        case "returnUrl": returnUrl = try string(key, value)
        case "returnBody": returnBody = try string(key, value)
        case "callbackUrl": callbackUrl = try string(key, value)
        case "callbackHost": callbackHost = try string(key, value)
        case "callbackBody": callbackBody = try string(key, value)
        case "callbackBodyType": callbackBodyType = try string(key, value)
        case "callbackFetchKey": callbackFetchKey = try int(key, value)
        case "persistentOps": persistentOps = try string(key, value)
        case "persistentNotifyUrl": persistentNotifyUrl = try string(key, value)
        case "persistentPipeline": persistentPipeline = try string(key, value)
        case "persistentType": persistentType = try int(key, value)
        case "persistentWorkflowTemplateID": persistentWorkflowTemplateID = try string(key, value)
        case "saveKey": saveKey = try string(key, value)
        case "forceSaveKey":
            switch value {
            case .null: forceSaveKey = nil
            case .bool(let flag): forceSaveKey = flag
            default:
                guard let number = Self.integer(value) else { throw mistyped(key, "bool") }
                forceSaveKey = number != 0
            }
        case "fsizeMin": fsizeMin = try int64(key, value)
        case "fsizeLimit": fsizeLimit = try int64(key, value)
        case "detectMime": detectMime = try int(key, value)
        case "mimeLimit": mimeLimit = try string(key, value)
        case "fileType": fileType = try int(key, value)
        case "deleteAfterDays": deleteAfterDays = try int(key, value)
        case "keylimit":
            switch value {
            case .null: keylimit = nil
            case .array(let elements):
                var keys: [String] = []
                for element in elements {
                    guard let key = element.stringValue else { throw mistyped("keylimit", "array of strings") }
                    keys.append(key)
                }
                keylimit = keys
            default: throw mistyped(key, "array of strings")
            }
        case "trafficLimit": trafficLimit = try int64(key, value)
        default:
            if let index = unknownFields.firstIndex(where: { $0.key == key }) {
                unknownFields[index].value = value
            } else {
                unknownFields.append((key, value))
            }
        }
    }

    /// Int64 from an integer, a bool (1/0) or an integral double.
    private static func integer(_ value: JSONValue) -> Int64? {
        if case .bool(let flag) = value { return flag ? 1 : 0 }
        return value.int64Value
    }

    private func mistyped(_ key: String, _ expected: String) -> UpError {
        UpError(.invalidJSON, detail: "policy field \(key) is not a \(expected)")
    }

    private func string(_ key: String, _ value: JSONValue) throws(UpError) -> String? {
        if case .null = value { return nil }
        guard let text = value.stringValue else { throw mistyped(key, "string") }
        return text
    }

    private func int64(_ key: String, _ value: JSONValue) throws(UpError) -> Int64? {
        if case .null = value { return nil }
        guard let number = Self.integer(value) else { throw mistyped(key, "integer") }
        return number
    }

    private func int(_ key: String, _ value: JSONValue) throws(UpError) -> Int? {
        guard let number = try int64(key, value) else { return nil }
        guard let small = Int(exactly: number) else { throw mistyped(key, "integer") }
        return small
    }
}
