import Basics
import Foundation
import HTTPKit
import UpCore

/// Checks upload tokens in the order of qiniu-protocol.md §1.2: present, well-formed and signed
/// by a known AccessKey, not expired, for a bucket that exists.
struct UploadAuthorizer: Sendable {
    let keys: KeyRing
    let buckets: Set<String>

    /// A token from an `Authorization: UpToken <token>` header (resumable uploads).
    func authorize(header: String?, now: Int64) throws(UpError) -> UpToken {
        let token = try UpToken.token(fromAuthorization: header)
        return try authorize(token: token, now: now)
    }

    /// A token from the form's `token` field; absent → `401 token not specified` (§1.2 step 1).
    func authorize(formToken: String?, now: Int64) throws(UpError) -> UpToken {
        guard let formToken, !formToken.isEmpty else { throw UpError(.tokenNotSpecified) }
        return try authorize(token: formToken, now: now)
    }

    private func authorize(token: String, now: Int64) throws(UpError) -> UpToken {
        let verified = try UpToken.verify(token, keys: keys, now: now)
        guard buckets.contains(verified.policy.bucket) else {
            throw UpError(.noSuchBucket, detail: verified.policy.bucket)
        }
        // One id joins token → chunks → mkfile → callback in the logs (DESIGN.md, "Secrets").
        if let context = RequestContext.current {
            context.addLogFields(["bucket": .string(verified.policy.bucket), "ak": .string(verified.accessKey)])
            if let trace = Self.traceID(of: verified.policy) { context.addLogFields(["trace": .string(trace)]) }
        }
        return verified
    }

    /// The trace id biz-server signs into its tokens' callbackBody as a constant `traceId`
    /// (form `traceId=<id>` or JSON `"traceId":"<id>"`); nil for tokens from elsewhere. Ids are
    /// `[A-Za-z0-9_-]`, so they need no decoding.
    static func traceID(of policy: PutPolicy) -> String? {
        guard let body = policy.callbackBody else { return nil }
        for marker in ["traceId=", "\"traceId\":\""] {
            guard let range = body.range(of: marker) else { continue }
            let id = body[range.upperBound...].prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
            if (8...64).contains(id.count) { return String(id) }
        }
        return nil
    }
}
