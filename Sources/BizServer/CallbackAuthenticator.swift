import NativeCrypto
import UpCore

/// Decides whether a callback request really comes from an up server holding our SecretKey and
/// is fresh (qiniu-protocol.md §3.5, plus the replay protection no Qiniu SDK has). Pure: `now`
/// is an argument.
///
/// 1. The `Authorization` signature, QBox or Qiniu, over the raw target and body (constant-time).
/// 2. A signed `X-Qiniu-Date` must lie within the allowed skew; with `requireSignedDate` it must exist.
/// 3. QBox signs no body unless it is exactly form-urlencoded (§3.2), so for any other body the
///    request target must carry `bodySha1=<hex SHA-1 of the body>` — which QBox does sign. The
///    JSON tokens biz-server issues put `$(bodySha1)` into their callbackUrl for this reason.
struct CallbackAuthenticator: Sendable {
    let verifier: CallbackVerifier
    let replay: BizServerConfiguration.ReplayProtection

    func authenticate(
        authorization: String?, method: String, target: String, headers: [(String, String)], body: [UInt8], now: Int64
    ) throws(BizError) -> CallbackVerifier.Verified {
        guard let authorization, !authorization.isEmpty else { throw BizError.missingSignature }
        let verified: CallbackVerifier.Verified
        do {
            verified = try verifier.verify(
                authorization: authorization, method: method, target: target, headers: headers, body: body)
        } catch {
            switch error.code {
            case .unknownAccessKey: throw BizError.unknownAccessKey.with(detail: error.detail)
            case .badRequest: throw BizError.staleDate.with(detail: error.detail)  // signed but unreadable date
            default: throw BizError.badSignature.with(detail: error.detail)
            }
        }
        if let date = verified.signedDate {
            guard abs(date - now) <= replay.maxClockSkewSeconds else {
                throw BizError.staleDate.with(detail: "signed date \(date), now \(now)")
            }
        } else if replay.requireSignedDate {
            throw BizError.dateRequired
        }

        let contentType = headers.first { $0.0.lowercased() == "content-type" }?.1
        let bodySigned = verified.scheme == .qiniu || contentType == QBoxSignature.formContentType
        let declared = Self.queryValue("bodySha1", in: target)
        if !bodySigned || declared != nil {
            let actual = Hex.encode(SHA1.hash(body))
            guard let declared, ConstantTime.equals(declared.lowercased().utf8, actual.utf8) else {
                throw BizError.bodyHashMismatch
            }
        }
        return verified
    }

    private static func queryValue(_ name: String, in target: String) -> String? {
        // The first "?" byte (a Character search misses one joined to a combining mark).
        guard let question = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return nil }
        let query = target.utf8[target.utf8.index(after: question)...]
        return FormURLEncoding.parse(Array(query))?.first { $0.name == name }?.value
    }
}
