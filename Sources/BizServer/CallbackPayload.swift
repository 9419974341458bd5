import UpCore

/// The members of a verified callback body (the `callbackBody` biz-server signed into the token,
/// rendered by the up server), decoded from form or JSON.
///
/// Required: `bucket`, `key`, `hash`, `fsize`. Optional: `mimeType`, `fname`, `endUser`,
/// `clientId`, `traceId`, and `x:` variables (top-level form fields, or the JSON `vars` object).
/// Anything else is ignored, so apps may extend their callbackBody. The key must pass
/// `ObjectKeyRule`, and no member may contain NUL.
struct CallbackPayload: Sendable, Equatable {
    var bucket: String
    var key: String
    var hash: String
    var fsize: Int64
    var mimeType = ""
    var fname = ""
    var endUser = ""
    var clientID = ""
    var traceID = ""
    var vars: [String: String] = [:]

    /// Decodes `body` according to its content type (spec §3.1: form or JSON).
    static func parse(body: [UInt8], contentType: String?) throws(BizError) -> CallbackPayload {
        let mediaType = (contentType ?? "").split(separator: ";").first.map { $0.lowercased() } ?? ""
        let payload: CallbackPayload
        switch mediaType.trimmingCharacters(in: " ") {
        case "application/json":
            payload = try parseJSON(body)
        case "application/x-www-form-urlencoded", "":
            payload = try parseForm(body)
        default:
            throw .malformedCallback("unsupported callback Content-Type")
        }
        // Every member is stored in the record; PostgreSQL's text cannot hold NUL, so such a
        // body is refused here (400, not retried) rather than failing the insert (503, retried).
        let texts = [payload.bucket, payload.hash, payload.mimeType, payload.fname, payload.endUser,
            payload.clientID, payload.traceID] + payload.vars.keys + payload.vars.values
        guard texts.allSatisfy(ProtocolText.allows) else { throw .malformedCallback("a member contains NUL") }
        return payload
    }

    private static func parseForm(_ body: [UInt8]) throws(BizError) -> CallbackPayload {
        guard let pairs = FormURLEncoding.parse(body) else { throw .malformedCallback("body is not valid form encoding") }
        var fields: [String: String] = [:]
        var vars: [String: String] = [:]
        for (name, value) in pairs {
            if name.hasPrefix("x:") {
                guard vars.updateValue(value, forKey: name) == nil else { throw .malformedCallback("duplicate \(name)") }
            } else {
                guard fields.updateValue(value, forKey: name) == nil else { throw .malformedCallback("duplicate \(name)") }
            }
        }
        guard let sizeText = fields["fsize"] else { throw .malformedCallback("missing fsize") }
        guard let size = Int64(sizeText), size >= 0 else { throw .malformedCallback("fsize must be a non-negative integer") }
        var payload = try required(bucket: fields["bucket"], key: fields["key"], hash: fields["hash"], fsize: size)
        payload.mimeType = fields["mimeType"] ?? ""
        payload.fname = fields["fname"] ?? ""
        payload.endUser = fields["endUser"] ?? ""
        payload.clientID = fields["clientId"] ?? ""
        payload.traceID = fields["traceId"] ?? ""
        payload.vars = vars
        return payload
    }

    private static func parseJSON(_ body: [UInt8]) throws(BizError) -> CallbackPayload {
        let json: JSONValue
        do {
            json = try JSONValue.parse(body)
        } catch {
            throw .malformedCallback("body is not valid JSON")
        }
        guard case .object(let members) = json else { throw .malformedCallback("body must be a JSON object") }
        var fields: [String: JSONValue] = [:]
        for (name, value) in members {
            guard fields.updateValue(value, forKey: name) == nil else { throw .malformedCallback("duplicate \(name)") }
        }
        func text(_ name: String) throws(BizError) -> String? {
            guard let value = fields[name] else { return nil }
            if case .null = value { return nil }
            guard let string = value.stringValue else { throw .malformedCallback("\(name) must be a string") }
            return string
        }
        let size: Int64
        switch fields["fsize"] {
        case .none: throw .malformedCallback("missing fsize")
        case .some(let value):
            guard let number = value.int64Value ?? value.stringValue.flatMap({ Int64($0) }), number >= 0 else {
                throw .malformedCallback("fsize must be a non-negative integer")
            }
            size = number
        }
        var payload = try required(bucket: text("bucket"), key: text("key"), hash: text("hash"), fsize: size)
        payload.mimeType = try text("mimeType") ?? ""
        payload.fname = try text("fname") ?? ""
        payload.endUser = try text("endUser") ?? ""
        payload.clientID = try text("clientId") ?? ""
        payload.traceID = try text("traceId") ?? ""
        var vars: [String: String] = [:]
        if case .object(let nested)? = fields["vars"] {
            for (name, value) in nested { vars[name] = value.stringValue }
        }
        for (name, value) in members where name.hasPrefix("x:") { vars[name] = value.stringValue }
        payload.vars = vars
        return payload
    }

    private static func required(bucket: String?, key: String?, hash: String?, fsize: Int64) throws(BizError)
        -> CallbackPayload
    {
        guard let bucket, !bucket.isEmpty else { throw .malformedCallback("missing bucket") }
        guard let key else { throw .malformedCallback("missing key") }
        if let violation = ObjectKeyRule.violation(in: key) { throw .malformedCallback(violation) }
        guard let hash, !hash.isEmpty, hash.utf8.count <= 128 else { throw .malformedCallback("missing hash") }
        return CallbackPayload(bucket: bucket, key: key, hash: hash, fsize: fsize)
    }
}
