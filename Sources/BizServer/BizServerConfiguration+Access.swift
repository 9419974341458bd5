public import Basics
public import Foundation
import NativeCrypto
import UpCore

extension BizServerConfiguration {
    /// The admin credential, the proxies trusted to name the client, and the per-address limit.
    ///
    /// JSON keys (top level; `null` is the same as absent):
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

    /// Sets ``access`` from the configuration `json` and `environment` (`UPGATE_ADMIN_TOKEN`).
    public mutating func loadAccess(json: Data, environment: [String: String]) throws(ConfigurationError) {
        guard let document = try? JSONValue.parse(Array(json)) else { throw ConfigurationError("invalid configuration JSON") }
        func member(_ name: String) -> JSONValue? {
            guard let value = document[name], value != .null else { return nil }
            return value
        }
        var access = Access()
        if let value = member("adminTokenSHA256") {
            guard let hash = value.stringValue else { throw ConfigurationError("adminTokenSHA256 must be a string") }
            access.adminTokenSHA256 = hash.lowercased()
        }
        if let token = environment["UPGATE_ADMIN_TOKEN"], !token.isEmpty {
            guard token.count >= Self.minimumAdminTokenLength else {
                throw ConfigurationError(
                    "UPGATE_ADMIN_TOKEN must be at least \(Self.minimumAdminTokenLength) characters (e.g. openssl rand -hex 32)")
            }
            access.adminTokenSHA256 = Self.apiKeyHash(token)
        }
        if let value = member("trustedProxies") {
            guard case .array(let entries) = value else {
                throw ConfigurationError("trustedProxies must be an array of CIDR blocks such as \"10.0.0.0/8\"")
            }
            var texts: [String] = []
            for (index, entry) in entries.enumerated() {
                guard let text = entry.stringValue else {
                    throw ConfigurationError("trustedProxies[\(index)] must be a string such as \"10.0.0.0/8\"")
                }
                texts.append(text)
            }
            do {
                access.trustedProxies = try TrustedProxies(texts)
            } catch {
                throw ConfigurationError(error.description)
            }
        }
        if let value = member("addressRateLimit") {
            access.addressRateLimit = try Self.rateLimit(value, name: "addressRateLimit")
        }
        self.access = access
    }

    /// `{"tokensPerSecond": N, "burst": M}`, both numbers, nothing else.
    private static func rateLimit(_ value: JSONValue, name: String) throws(ConfigurationError) -> RateLimit {
        let shape = ConfigurationError("\(name) must be {\"tokensPerSecond\": N, \"burst\": M}")
        guard let object = try? JSONObject(value) else { throw shape }
        for key in object.members.keys where key != "tokensPerSecond" && key != "burst" {
            throw ConfigurationError("unknown key \"\(key)\" in \(name)")
        }
        func number(_ key: String) -> Double? {
            switch object[key] {
            case .int(let value)?: Double(value)
            case .double(let value)?: value
            default: nil
            }
        }
        guard let rate = number("tokensPerSecond"), let burst = number("burst") else { throw shape }
        return RateLimit(tokensPerSecond: rate, burst: burst)
    }
}
