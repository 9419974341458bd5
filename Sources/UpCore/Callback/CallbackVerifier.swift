internal import NativeCrypto

/// Verifies the `Authorization` of an incoming upload callback, QBox or Qiniu
/// (qiniu-protocol.md §3.5; Appendix A.8: verify both, dispatch on the prefix).
///
/// ```swift
/// let verifier = CallbackVerifier(keys: keyRing)
/// let verified = try verifier.verify(
///     authorization: request.header("Authorization"), method: "POST",
///     target: request.rawTarget, headers: request.headers, body: body)
/// if let signed = verified.signedDate, abs(signed - now) > 900 { /* replay: refuse */ }
/// ```
public struct CallbackVerifier: Sendable {
    /// Which scheme authenticated the request.
    public enum Scheme: Sendable, Equatable {
        /// `QBox AK:sign` (§3.2): path, query and — for form bodies only — the body.
        case qbox
        /// `Qiniu AK:sign` (§3.3): method, target, Host, Content-Type, `X-Qiniu-*`, body.
        case qiniu
    }

    /// The outcome of a successful verification.
    public struct Verified: Sendable, Equatable {
        /// The scheme that verified.
        public let scheme: Scheme
        /// The AccessKey that signed.
        public let accessKey: String
        /// `X-Qiniu-Date` in Unix seconds when it was covered by the signature (Qiniu scheme
        /// only), for replay protection; `nil` otherwise.
        public let signedDate: Int64?

        /// Creates an outcome (for tests and doubles).
        ///
        /// - Parameters:
        ///   - scheme: The scheme that verified.
        ///   - accessKey: The signing AccessKey.
        ///   - signedDate: Signed `X-Qiniu-Date` in Unix seconds, if any.
        public init(scheme: Scheme, accessKey: String, signedDate: Int64?) {
            self.scheme = scheme
            self.accessKey = accessKey
            self.signedDate = signedDate
        }
    }

    private let keys: KeyRing

    /// Creates a verifier.
    ///
    /// - Parameter keys: The AccessKeys whose callbacks are accepted.
    public init(keys: KeyRing) {
        self.keys = keys
    }

    /// Verifies one callback request. Pass everything raw: the body before any decoding, the
    /// request-target exactly as received (§3.5 steps 1–2).
    ///
    /// `Host` and `Content-Type` are looked up in `headers` case-insensitively, and `X-Qiniu-*`
    /// names are canonicalized here, so header-name case from the HTTP layer does not matter.
    ///
    /// - Parameters:
    ///   - authorization: The `Authorization` header value, or `nil` when absent.
    ///   - method: HTTP method (Qiniu scheme).
    ///   - target: Raw request-target `path[?query]`.
    ///   - headers: All request headers, any name case.
    ///   - body: Raw body bytes.
    /// - Returns: Scheme, AccessKey and the signed date, if any.
    /// - Throws: ``UpError`` `.badToken` (missing/unknown scheme/malformed credentials),
    ///   `.unknownAccessKey`, `.badSignature`, or `.badRequest` for a signed but malformed
    ///   `X-Qiniu-Date`.
    public func verify(
        authorization: String?, method: String, target: String, headers: [(String, String)], body: [UInt8]
    ) throws(UpError) -> Verified {
        guard let authorization else { throw UpError(.badToken, detail: "no Authorization header") }
        let scheme: Scheme
        // Cut by bytes: a combining mark after the space would otherwise join it in one Character.
        let credentials: Substring.UTF8View
        if authorization.utf8.starts(with: "QBox ".utf8) {
            (scheme, credentials) = (.qbox, authorization.utf8.dropFirst(5))
        } else if authorization.utf8.starts(with: "Qiniu ".utf8) {
            (scheme, credentials) = (.qiniu, authorization.utf8.dropFirst(6))
        } else {
            throw UpError(.badToken, detail: "unknown Authorization scheme")
        }
        let parts = credentials.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard parts.count == 2, let signature = URLSafeBase64.decode(bytes: Array(parts[1])) else {
            throw UpError(.badToken, detail: "malformed \(scheme) credentials")
        }
        let accessKey = String(decoding: parts[0], as: UTF8.self)
        guard let mac = keys.mac(for: accessKey) else {
            throw UpError(.unknownAccessKey, detail: "callback access key \(accessKey)")
        }
        let contentType = Self.header("Content-Type", in: headers)
        let signed: [UInt8]
        switch scheme {
        case .qbox:
            signed = QBoxSignature.signingBytes(target: target, body: body, contentType: contentType)
        case .qiniu:
            signed = QiniuSignature.signingBytes(
                method: method, target: target, host: Self.header("Host", in: headers) ?? "",
                contentType: contentType, headers: headers, body: body)
        }
        guard ConstantTime.equals(signature, mac.authenticationCode(for: signed)) else {
            throw UpError(.badSignature, detail: "\(scheme) callback signature mismatch for \(accessKey)")
        }
        var signedDate: Int64?
        if scheme == .qiniu,
            let date = QiniuSignature.signedHeaders(headers).first(where: { $0.name == "X-Qiniu-Date" })?.value
        {
            guard let seconds = QiniuDate.parse(date) else {
                throw UpError(.badRequest, detail: "malformed X-Qiniu-Date \(date)")
            }
            signedDate = seconds
        }
        return Verified(scheme: scheme, accessKey: accessKey, signedDate: signedDate)
    }

    /// First value of header `name`, compared case-insensitively (ASCII).
    static func header(_ name: String, in headers: [(String, String)]) -> String? {
        let wanted = QiniuSignature.canonicalHeaderName(name)
        return headers.first(where: { QiniuSignature.canonicalHeaderName($0.0) == wanted })?.1
    }
}
