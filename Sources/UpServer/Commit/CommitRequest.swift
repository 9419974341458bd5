import HTTPKit
import UpCore

/// What a finished upload (form POST, mkfile, v2 complete) hands over to become an object.
struct CommitRequest: Sendable {
    var token: UpToken
    /// The key the client asked for; nil when it supplied none (spec §1.3 "Final key selection").
    var clientKey: String?
    var fname: String?
    var clientMimeType: String?
    /// Type sniffed from the first bytes (spec §1.3 detectMime / mimeLimit).
    var sniffedMimeType: String?
    /// `x:` variables, in the order received.
    var customVariables: [(name: String, value: String)] = []
    /// `x-qn-meta-` metadata.
    var metadata: [(name: String, value: String)] = []
    var etag: String
    var fsize: Int64
    var segments: [Segment]
    /// Which protocol uploaded it: decides the overwrite rule of a bucket-only scope (§1.3).
    var kind: UploadKind
    /// mkfile idempotency (DESIGN.md): the first result is recorded under this key.
    var completionKey: CompletionKey?
}

/// The uploader's answer: the JSON to relay (200) or the callback failure (579, object stored).
enum CommitResult: Sendable, Equatable {
    /// 200 with this JSON body (returnBody, the default `{"hash","key"}`, or the callback reply).
    case stored(key: String, reply: [UInt8])
    /// 579: stored, but no callback URL accepted the callback; the outbox keeps retrying.
    case callbackFailed(key: String, reason: String)
}

extension CommitResult {
    /// The answer of every path but the form (which may redirect, `FormUploadController`): 200
    /// with the reply JSON as is (returnBody, default, or the callback's answer, §3.4/§3.6), or
    /// `579 {"error": reason}` (stored, callback failed); both `Cache-Control: no-store`.
    var response: Response {
        switch self {
        case .stored(_, let reply):
            Response.json(raw: reply, headers: ["Cache-Control": "no-store"])
        case .callbackFailed(_, let reason):
            Response.error(status: 579, message: reason, headers: ["Cache-Control": "no-store"])
        }
    }

    /// The key the object was stored under.
    var key: String {
        switch self {
        case .stored(let key, _), .callbackFailed(let key, _): key
        }
    }
}
