import Basics
import UpCore

/// The body of `POST /v1/uptoken`, validated.
///
/// `{"key"?, "fname"?, "fsize"?, "exactSize"?, "mimeType"?, "vars"? {"x:name": "..."}, "traceId"?}`;
/// an empty body is `{}` (a token whose object is named by saveKey). A declared `fsize` becomes
/// the token's `fsizeLimit`, and with `"exactSize": true` its `fsizeMin` too (issue 10 item 6). Unknown members are refused rather
/// than ignored so a misspelt `filesize` cannot silently lift a limit.
struct TokenRequest: Sendable, Equatable {
    var key: String?
    var fname: String?
    var fsize: Int64?
    /// The object must be exactly `fsize` bytes, not merely at most.
    var exactSize = false
    var mimeType: String?
    var vars: [(name: String, value: String)] = []
    var traceID: String?

    static func == (lhs: TokenRequest, rhs: TokenRequest) -> Bool {
        lhs.key == rhs.key && lhs.fname == rhs.fname && lhs.fsize == rhs.fsize && lhs.exactSize == rhs.exactSize
            && lhs.mimeType == rhs.mimeType
            && lhs.vars.elementsEqual(rhs.vars, by: { $0 == $1 }) && lhs.traceID == rhs.traceID
    }

    /// Parses and validates `body`.
    static func parse(_ body: [UInt8]) throws(BizError) -> TokenRequest {
        guard !body.isEmpty else { return TokenRequest() }
        let json: JSONValue
        do {
            json = try JSONValue.parse(body)
        } catch {
            throw .invalidRequest("body is not valid JSON")
        }
        guard case .object(let members) = json else { throw .invalidRequest("body must be a JSON object") }
        var request = TokenRequest()
        var seen: UInt8 = 0  // a bit per member: the duplicate check is a mask, no set of strings to hash
        for (name, value) in members {
            guard let member = Member(rawValue: name) else { throw .invalidRequest("unknown member '\(name)'") }
            guard seen & member.bit == 0 else { throw .invalidRequest("duplicate member '\(name)'") }
            seen |= member.bit
            switch member {
            case .key: request.key = try string(value, name)
            case .fname: request.fname = try string(value, name)
            case .mimeType: request.mimeType = try string(value, name)
            case .traceId: request.traceID = try string(value, name)
            case .fsize:
                guard case .null = value else {
                    guard let size = value.int64Value, size >= 0 else {
                        throw .invalidRequest("fsize must be a non-negative integer")
                    }
                    request.fsize = size
                    continue
                }
            case .exactSize:
                switch value {
                case .null: break
                case .bool(let exact): request.exactSize = exact
                default: throw .invalidRequest("exactSize must be true or false")
                }
            case .vars: request.vars = try variables(value)
            }
        }
        if let key = request.key {
            guard !key.isEmpty, ObjectKeyRule.allows(key) else {
                throw .invalidRequest("key must be 1…\(ObjectKeyRule.maxBytes) bytes of UTF-8 without NUL")
            }
        }
        if request.exactSize && request.fsize == nil { throw .invalidRequest("exactSize needs fsize") }
        if let fname = request.fname, fname.utf8.count > 1024 { throw .invalidRequest("fname longer than 1024 bytes") }
        if let mime = request.mimeType, mime.utf8.count > 255 || mime.isEmpty {
            throw .invalidRequest("mimeType must be 1…255 bytes")
        }
        if let trace = request.traceID, !TraceID.isValid(trace) {
            throw .invalidRequest("traceId must be 8…64 of [A-Za-z0-9_-]")
        }
        return request
    }

    /// The members a body may have, by their names in the JSON.
    private enum Member: String {
        case key, fname, mimeType, traceId, fsize, exactSize, vars

        /// Its own bit in the duplicate mask.
        var bit: UInt8 {
            switch self {
            case .key: 1
            case .fname: 2
            case .mimeType: 4
            case .traceId: 8
            case .fsize: 16
            case .exactSize: 32
            case .vars: 64
            }
        }
    }

    private static func string(_ value: JSONValue, _ name: String) throws(BizError) -> String? {
        if case .null = value { return nil }
        guard let text = value.stringValue else { throw .invalidRequest("\(name) must be a string") }
        guard ProtocolText.allows(text) else { throw .invalidRequest("\(name) must not contain NUL") }
        return text
    }

    private static func variables(_ value: JSONValue) throws(BizError) -> [(name: String, value: String)] {
        if case .null = value { return [] }
        guard case .object(let members) = value else { throw .invalidRequest("vars must be an object of strings") }
        guard members.count <= CustomVariable.maxCount else {
            throw .invalidRequest("at most \(CustomVariable.maxCount) vars")
        }
        var names = Set<String>()
        var result: [(name: String, value: String)] = []
        for (name, member) in members {
            guard CustomVariable.isValidName(name) else {
                throw .invalidRequest("var names must look like x:name (x: then 1…64 of [A-Za-z0-9_-])")
            }
            guard names.insert(name).inserted else { throw .invalidRequest("duplicate var '\(name)'") }
            guard let text = member.stringValue, ProtocolText.allows(text) else {
                throw .invalidRequest("var '\(name)' must be a string without NUL")
            }
            guard text.utf8.count <= CustomVariable.maxValueBytes else {
                throw .invalidRequest("var '\(name)' longer than \(CustomVariable.maxValueBytes) bytes")
            }
            result.append((name, text))
        }
        return result
    }
}

/// Trace ids join token → chunks → mkfile → callback in the logs (DESIGN.md, "Secrets").
enum TraceID {
    /// 8…64 characters of `[A-Za-z0-9_-]`: safe in a form body, a header and a log line.
    static func isValid(_ text: String) -> Bool {
        (8...64).contains(text.utf8.count) && text.utf8.allSatisfy(isURLSafeCharacter)
    }

    /// A new random id: 16 URL-safe characters (96 bits).
    static func generate() -> String { RandomID.urlSafe(count: 16) }
}

/// `[A-Za-z0-9_-]`: the characters allowed in trace ids and custom variable names.
func isURLSafeCharacter(_ byte: UInt8) -> Bool {
    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
        || byte == 0x5F || byte == 0x2D
}
