import JSONText

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

    /// ``serialized()`` as UTF-8 bytes, written straight from the fields into one buffer (no
    /// ``JSONValue`` tree in between: this runs for every token biz-server signs). Byte for byte
    /// the same as `json.serialized()`; both walk ``forEachMember(into:)``.
    public func serializedBytes() -> [UInt8] {
        var writer = MemberWriter()
        forEachMember(into: &writer)
        writer.output.append(UInt8(ascii: "}"))
        return writer.output
    }

    /// The policy as an ordered JSON object (the same member order as ``serialized()``).
    public var json: JSONValue {
        var collector = MemberCollector()
        forEachMember(into: &collector)
        return .object(collector.members)
    }

    /// The set members in serialization order: `scope`, `deadline`, the other set fields in the
    /// order of §1.3's table, then ``unknownFields`` in order. The one place that order lives;
    /// generic, so each receiver gets its own specialized walk (no closure call per field).
    private func forEachMember(into sink: inout some MemberSink) {
        sink.string("scope", scope)
        sink.int("deadline", deadline)
        sink.add("isPrefixalScope", isPrefixalScope)
        sink.add("insertOnly", insertOnly)
        sink.add("endUser", endUser)
        sink.add("returnUrl", returnUrl)
        sink.add("returnBody", returnBody)
        sink.add("callbackUrl", callbackUrl)
        sink.add("callbackHost", callbackHost)
        sink.add("callbackBody", callbackBody)
        sink.add("callbackBodyType", callbackBodyType)
        sink.add("callbackFetchKey", callbackFetchKey)
        sink.add("persistentOps", persistentOps)
        sink.add("persistentNotifyUrl", persistentNotifyUrl)
        sink.add("persistentPipeline", persistentPipeline)
        sink.add("persistentType", persistentType)
        sink.add("persistentWorkflowTemplateID", persistentWorkflowTemplateID)
        sink.add("saveKey", saveKey)
        if let forceSaveKey { sink.other("forceSaveKey", .bool(forceSaveKey)) }
        sink.add("fsizeMin", fsizeMin)
        sink.add("fsizeLimit", fsizeLimit)
        sink.add("detectMime", detectMime)
        sink.add("mimeLimit", mimeLimit)
        sink.add("fileType", fileType)
        sink.add("deleteAfterDays", deleteAfterDays)
        if let keylimit { sink.other("keylimit", .array(keylimit.map { .string($0) })) }
        sink.add("trafficLimit", trafficLimit)
        for (key, value) in unknownFields { sink.other(key, value) }
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

/// Receives a policy's members from ``PutPolicy/forEachMember(into:)``. `string` and `int` get
/// the documented fields, whose names are plain ASCII literals; `other` gets the rest (any name).
private protocol MemberSink {
    mutating func string(_ key: String, _ value: String)
    mutating func int(_ key: String, _ value: Int64)
    mutating func other(_ key: String, _ value: JSONValue)
}

extension MemberSink {
    /// A field that may be unset: passed on only when set.
    mutating func add(_ key: String, _ value: String?) { if let value { string(key, value) } }
    mutating func add(_ key: String, _ value: Int?) { if let value { int(key, Int64(value)) } }
    mutating func add(_ key: String, _ value: Int64?) { if let value { int(key, value) } }
}

/// Compact JSON text of the members, in one buffer.
private struct MemberWriter: MemberSink {
    var output: [UInt8]

    init() {
        output = []
        output.reserveCapacity(512)
        output.append(UInt8(ascii: "{"))
    }

    /// `"key":`, after a comma unless it is the first member; a documented field's name needs
    /// no escaping, so it is copied as is.
    private mutating func name(_ key: String, escaped: Bool) {
        if output.count > 1 { output.append(UInt8(ascii: ",")) }
        if escaped {
            JSONText.appendString(key, to: &output)
        } else {
            output.append(UInt8(ascii: "\""))
            output.append(contentsOf: key.utf8)
            output.append(UInt8(ascii: "\""))
        }
        output.append(UInt8(ascii: ":"))
    }

    mutating func string(_ key: String, _ value: String) {
        name(key, escaped: false)
        JSONText.appendString(value, to: &output)
    }

    mutating func int(_ key: String, _ value: Int64) {
        name(key, escaped: false)
        JSONText.appendDecimal(value, to: &output)
    }

    mutating func other(_ key: String, _ value: JSONValue) {
        name(key, escaped: true)
        value.write(to: &output)
    }
}

/// The members as an ordered list, for ``PutPolicy/json``.
private struct MemberCollector: MemberSink {
    var members: [(key: String, value: JSONValue)] = []

    mutating func string(_ key: String, _ value: String) { members.append((key, .string(value))) }
    mutating func int(_ key: String, _ value: Int64) { members.append((key, .int(value))) }
    mutating func other(_ key: String, _ value: JSONValue) { members.append((key, value)) }
}
