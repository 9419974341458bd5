import JSONText
import NativeCrypto
import UpCore

/// Turns an authenticated client's token request into a signed UpToken. Pure: time, trace id and
/// the callback URL come in as arguments; nothing here does I/O.
///
/// Every decision a client could dispute is made before signing: the key must sit under the
/// client's prefix, a declared size or MIME type must fit the client's limits.
struct TokenIssuer: Sendable {
    /// What `POST /v1/uptoken` returns.
    struct IssuedToken: Sendable, Equatable {
        /// The token text as UTF-8, as signed: copied into the response as is.
        var uptokenBytes: [UInt8]
        /// The token text.
        var uptoken: String { String(decoding: uptokenBytes, as: UTF8.self) }
        var bucket: String
        /// nil when the up server names the object by saveKey.
        var key: String?
        var expiresAt: Int64
        var upHosts: [String]
        var traceID: String
        var policy: PutPolicy
    }

    let accessKey: String
    let mac: HMACSHA1
    let upHosts: [String]

    /// Builds and signs the policy for `request` from `client`.
    ///
    /// - Parameters:
    ///   - subject: Whose token it is; the API client itself unless an end user's JWT said otherwise.
    ///   - callbackURL: biz-server's own `…/v1/callback` URL as the up server must reach it.
    func issue(
        for client: BizServerConfiguration.Client,
        subject: TokenSubject? = nil,
        request: TokenRequest,
        now: Int64,
        traceID: String,
        callbackURL: String
    ) throws(BizError) -> IssuedToken {
        let subject = subject ?? TokenSubject(client)
        let prefix = subject.keyPrefix
        if let key = request.key, !key.hasPrefix(prefix) {
            throw BizError.keyOutsidePrefix.with(detail: "client \(client.id)")
        }
        var policy: PutPolicy
        if let key = request.key {
            // qiniu-protocol.md §1.3: "<bucket>:<key>" allows exactly that key (overwrite unless insertOnly),
            // which is also what lets a client refresh the token of a long upload for the same key.
            policy = PutPolicy(scope: "\(client.bucket):\(key)", deadline: now + client.tokenLifetimeSeconds)
        } else {
            // No key: the up server names the object `<prefix>$(etag)$(ext)`; the prefix scope keeps
            // any client-chosen key under the prefix and forceSaveKey ignores it altogether.
            policy = PutPolicy(scope: "\(client.bucket):\(prefix)", deadline: now + client.tokenLifetimeSeconds)
            policy.isPrefixalScope = 1
            policy.saveKey = prefix + "$(etag)$(ext)"
            policy.forceSaveKey = true
        }
        if client.insertOnly { policy.insertOnly = 1 }
        policy.endUser = subject.endUser
        policy.fsizeMin = client.fsizeMin
        policy.fsizeLimit = client.fsizeLimit
        if let left = subject.remainingBytes {
            // What is left of the user's daily bytes bounds this token too (maxBytesPerUserPerDay).
            policy.fsizeLimit = min(policy.fsizeLimit ?? left, left)
        }
        policy.mimeLimit = client.mimeLimit
        policy.returnBody = client.returnBody

        // A declared size or type is checked by the very code the up server runs on the real
        // object (PutPolicy+Limits), so biz-server cannot disagree with it.
        do {
            if let size = request.fsize { try policy.checkSize(size) }
            if let mime = request.mimeType { try policy.checkMimeType(mime) }
        } catch {
            switch error.code {
            case .fileTooSmall: throw BizError.fileTooSmall.with(detail: error.detail)
            case .fileTooLarge: throw BizError.fileTooLarge.with(detail: error.detail)
            default: throw BizError.limitedMimeType.with(detail: error.detail)
            }
        }
        // The declared size is a promise the token then holds the uploader to: the up server
        // refuses anything larger (413), and anything else too with exactSize (403), so a
        // client cannot ask for a 5-byte token and store 16 GiB under it (issue 10 item 6).
        if let size = request.fsize {
            policy.fsizeLimit = size
            if request.exactSize { policy.fsizeMin = size }
        }
        if let clash = request.vars.first(where: { client.vars[$0.name] != nil }) {
            // Dropping the client's value silently would hand back a token that does not say what
            // was asked for; the configured one must win, so the request is refused instead.
            throw BizError.invalidRequest("var '\(clash.name)' is set by the server for this client")
        }

        let constants = Self.constants(client: client, request: request, traceID: traceID)
        switch client.callbackBodyType {
        case .form:
            policy.callbackUrl = callbackURL
            policy.callbackBodyType = QBoxSignature.formContentType
            policy.callbackBody = Self.formCallbackBody(constants)
        case .json:
            // QBox signs only path?query for JSON (spec §3.2); the signed `$(bodySha1)` query binds the body.
            policy.callbackUrl = callbackURL + "?bodySha1=$(bodySha1)"
            policy.callbackBodyType = "application/json"
            policy.callbackBody = Self.jsonCallbackBody(constants)
        }

        var token: [UInt8] = []
        UpToken.sign(policy, accessKey: accessKey, mac: mac, appendingTo: &token)
        return IssuedToken(
            uptokenBytes: token, bucket: client.bucket, key: request.key, expiresAt: policy.deadline, upHosts: upHosts,
            traceID: traceID, policy: policy)
    }

    /// Names the up server fills in (spec §2), in callback-body order.
    static let magicFields: [(name: String, variable: String)] = [
        ("bucket", "bucket"), ("key", "key"), ("hash", "etag"), ("fsize", "fsize"), ("mimeType", "mimeType"),
        ("fname", "fname"), ("endUser", "endUser"),
    ]

    /// Values fixed at signing time: the client id, the trace id and the `x:` variables (the
    /// client's own, then the configured ones; `issue` has refused a clash between them). They
    /// are signed into the token, so the uploader cannot change them afterwards.
    private static func constants(
        client: BizServerConfiguration.Client, request: TokenRequest, traceID: String
    ) -> [(name: String, value: String)] {
        // One buffer of the final size (a literal of two, grown twice, and a mapped copy of the
        // sorted variables cost ~2,000 instructions a token).
        var constants: [(name: String, value: String)] = []
        constants.reserveCapacity(2 + request.vars.count + client.vars.count)
        constants.append(("clientId", client.id))
        constants.append(("traceId", traceID))
        if !request.vars.isEmpty { constants.append(contentsOf: request.vars) }
        for (name, value) in client.vars.sorted(by: { $0.key < $1.key }) { constants.append((name, value)) }
        return constants
    }

    /// `bucket=$(bucket)&key=$(key)&…`: the same for every token, so built once.
    private static let formMagicFields = Array(
        magicFields.map { "\($0.name)=$(\($0.variable))" }.joined(separator: "&").utf8)

    private static func formCallbackBody(_ constants: [(name: String, value: String)]) -> String {
        // Built as bytes, one String at the end: this runs for every token.
        var body = formMagicFields
        body.reserveCapacity(formMagicFields.count + 64 * constants.count)
        // Percent-encoding makes `$`, `(`, `&`, `=` inert, so a value can never inject a variable or a field.
        for constant in constants {
            body.append(UInt8(ascii: "&"))
            FormURLEncoding.appendPercentEncoded(constant.name, to: &body)
            body.append(UInt8(ascii: "="))
            FormURLEncoding.appendPercentEncoded(constant.value, to: &body)
        }
        return String(decoding: body, as: UTF8.self)
    }

    private static func jsonCallbackBody(_ constants: [(name: String, value: String)]) -> String {
        var body = "{"
        for (index, field) in magicFields.enumerated() {
            if index > 0 { body += "," }
            // fsize outside a string literal renders as a JSON number; strings inside literals (spec §2).
            body += field.name == "fsize" ? "\"fsize\":$(fsize)" : "\"\(field.name)\":\"$(\(field.variable))\""
        }
        let (fixed, vars) = (constants.prefix(2), constants.dropFirst(2))
        for field in fixed { body += ",\(jsonString(field.name)):\(jsonString(field.value))" }
        body += ",\"vars\":{" + vars.map { "\(jsonString($0.name)):\(jsonString($0.value))" }.joined(separator: ",") + "}}"
        return body
    }

    /// A JSON string literal whose `$` is written `\u0024`, so the up server's renderer can never
    /// mistake a constant for a `$(variable)` (it substitutes inside string literals too, spec §2).
    private static func jsonString(_ value: String) -> String {
        var escaped: [UInt8] = []
        escaped.reserveCapacity(value.utf8.count + 2)
        JSONText.appendStringContent(value, to: &escaped)
        var out: [UInt8] = [UInt8(ascii: "\"")]
        out.reserveCapacity(escaped.count + 2)
        if escaped.contains(UInt8(ascii: "$")) {
            // `$` is ASCII, so it never occurs inside a multi-byte UTF-8 sequence.
            for byte in escaped {
                if byte == UInt8(ascii: "$") { out.append(contentsOf: #"\u0024"#.utf8) } else { out.append(byte) }
            }
        } else {
            out.append(contentsOf: escaped)
        }
        out.append(UInt8(ascii: "\""))
        return String(decoding: out, as: UTF8.self)
    }
}
