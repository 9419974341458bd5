import Basics
import NativeCrypto
public import ServerShell

extension BizServerConfiguration {
    /// The admin credential, the proxies trusted to name the client, and the per-address limit.
    ///
    /// JSON keys (top level; `null` is the same as absent; `trustedProxies` is read with the keys
    /// both servers share, `CommonSettings`):
    ///
    /// | key | default |
    /// |---|---|
    /// | `adminTokenSHA256` | none: `/v1/admin/…` refuses everyone. 64 hex digits; `UPGATE_ADMIN_TOKEN` (the token itself, ≥ 16 characters, hashed at load) overrides it |
    /// | `trustedProxies` | `[]`: `X-Forwarded-For` is ignored. CIDR blocks (`"10.0.0.0/8"`, `"::1"`) whose peers may name the client |
    /// | `addressRateLimit` | none. `{"tokensPerSecond": N, "burst": M}` per client address on `POST /v1/uptoken` and `/v1/admin/…` |
    public struct Access: Sendable {
        /// Lower-case hex SHA-256 of the admin token; nil disables the admin API.
        public var adminTokenSHA256: String?
        /// Peers whose `X-Forwarded-For` is believed.
        public var trustedProxies: TrustedProxies
        /// Requests per client address; nil: no such limit.
        public var addressRateLimit: RateLimit?

        /// Creates the settings; every parameter has the documented default.
        public init(adminTokenSHA256: String? = nil, trustedProxies: TrustedProxies = .none, addressRateLimit: RateLimit? = nil) {
            self.adminTokenSHA256 = adminTokenSHA256?.lowercased()
            self.trustedProxies = trustedProxies
            self.addressRateLimit = addressRateLimit
        }

        /// Checks what the types do not.
        func validate() throws(ConfigurationError) {
            if let hash = adminTokenSHA256, !BizServerConfiguration.isSHA256Hex(hash) {
                throw ConfigurationError("adminTokenSHA256 must be 64 hex digits (the SHA-256 of the admin token)")
            }
            if let rate = addressRateLimit, !(rate.tokensPerSecond > 0 && rate.burst >= 1) {
                throw ConfigurationError("addressRateLimit needs tokensPerSecond > 0 and burst >= 1")
            }
        }
    }

    /// The shortest `UPGATE_ADMIN_TOKEN` accepted: a short one could be guessed online.
    static let minimumAdminTokenLength = 16

    /// Whether `text` is 64 hex digits.
    static func isSHA256Hex(_ text: String) -> Bool {
        text.utf8.count == 64 && text.allSatisfy(\.isHexDigit)
    }

    /// Sets ``access`` from the file's `adminTokenSHA256` and `addressRateLimit` (read by the
    /// shell's strict reader), `trustedProxies` (already read by `CommonSettings`) and
    /// `environment` (`UPGATE_ADMIN_TOKEN`).
    mutating func readAccess(
        _ file: ConfigurationObject, trustedProxies: TrustedProxies, environment: [String: String]
    ) throws(ConfigurationError) {
        var access = Access(trustedProxies: trustedProxies)
        access.adminTokenSHA256 = try file.string("adminTokenSHA256")?.lowercased()
        if let token = environment["UPGATE_ADMIN_TOKEN"], !token.isEmpty {
            guard token.count >= Self.minimumAdminTokenLength else {
                throw ConfigurationError(
                    "UPGATE_ADMIN_TOKEN must be at least \(Self.minimumAdminTokenLength) characters (e.g. openssl rand -hex 32)")
            }
            access.adminTokenSHA256 = Self.apiKeyHash(token)
        }
        if let limit = try file.object("addressRateLimit") {
            guard let rate = try limit.number("tokensPerSecond"), let burst = try limit.number("burst") else {
                throw file.invalid("addressRateLimit", "needs both tokensPerSecond and burst")
            }
            access.addressRateLimit = RateLimit(tokensPerSecond: rate, burst: burst)
        }
        self.access = access
    }

    /// See `ServiceConfiguration.trustedProxies`: ``Access/trustedProxies``.
    public var trustedProxies: TrustedProxies { access.trustedProxies }
}
