public import Foundation
import Basics
import HTTPKit
import NativeCrypto

/// Loading ``BizServerConfiguration`` from `Config/biz-server.json` and the environment.
///
/// JSON keys (lowerCamelCase, all optional unless marked; unknown keys such as `_comment` are ignored):
///
/// | key | default |
/// |---|---|
/// | `host` | `"127.0.0.1"` |
/// | `port` | `8080` |
/// | `dataDirectory` | `"data/biz"` (relative to the working directory) |
/// | `publicBaseURL` | none: `http://<host>:<bound port>` |
/// | `accessKey`, `secretKey` | required here or in the environment |
/// | `upHosts` | `["http://127.0.0.1:9000"]` |
/// | `rateLimit` | `{"tokensPerSecond": 10, "burst": 20}` |
/// | `replay` | `{"maxClockSkewSeconds": 300, "requireSignedDate": false}` |
/// | `durableWrites` | `true` |
/// | `threads` | `0` (= number of cores) |
/// | `maxConnections`, `headerTimeoutSeconds`, `maxConnectionsPerAddress` | `4096`, `30`, `0` (no limit) |
/// | `adminTokenSHA256`, `trustedProxies`, `addressRateLimit` | see ``BizServerConfiguration/Access`` |
/// | `clients[]` | `id`, `bucket` required; `apiKeySHA256` (or `UPGATE_API_KEYS`; none: only stored keys); `endUser`, `keyPrefix` (`"{client}/"`), `fsizeMin`, `fsizeLimit`, `mimeLimit`, `tokenLifetimeSeconds` (3600), `insertOnly` (false), `callbackBodyType` (`"form"` or `"json"`), `returnBody`, `vars` ({}) |
///
/// Environment variables override the file, so production secrets never need to be in it:
///
/// | variable | meaning |
/// |---|---|
/// | `UPGATE_ACCESS_KEY`, `UPGATE_SECRET_KEY` | Qiniu AK / SK |
/// | `UPGATE_API_KEYS` | `client=apikey,client2=apikey2`: plaintext keys, hashed at load |
/// | `UPGATE_ADMIN_TOKEN` | the admin API's token (≥ 16 characters), hashed at load |
/// | `UPGATE_BIZ_PUBLIC_BASE_URL` | `publicBaseURL` |
/// | `UPGATE_UP_HOSTS` | comma-separated `upHosts` |
extension BizServerConfiguration {
    /// Parses the JSON configuration text, applies `environment` overrides and validates.
    public static func load(json: Data, environment: [String: String]) throws -> BizServerConfiguration {
        let file: FileFormat
        do {
            file = try JSONDecoder().decode(FileFormat.self, from: json)
        } catch let error as DecodingError {
            throw ConfigurationError("invalid configuration JSON: \(Self.describe(error))")
        }
        var configuration = BizServerConfiguration(
            host: file.host ?? "127.0.0.1",
            port: file.port ?? 8080,
            dataDirectory: file.dataDirectory ?? "data/biz",
            publicBaseURL: file.publicBaseURL,
            accessKey: file.accessKey ?? "",
            secretKey: file.secretKey ?? "",
            upHosts: file.upHosts ?? ["http://127.0.0.1:9000"],
            clients: (file.clients ?? []).map(\.client),
            rateLimit: RateLimit(
                tokensPerSecond: file.rateLimit?.tokensPerSecond ?? 10, burst: file.rateLimit?.burst ?? 20),
            replay: ReplayProtection(
                maxClockSkewSeconds: file.replay?.maxClockSkewSeconds ?? 300,
                requireSignedDate: file.replay?.requireSignedDate ?? false),
            durableWrites: file.durableWrites ?? true,
            threads: file.threads ?? 0,
            connections: ConnectionLimits(
                maxConnections: file.maxConnections ?? 4096,
                headerTimeoutSeconds: file.headerTimeoutSeconds ?? 30,
                maxConnectionsPerAddress: file.maxConnectionsPerAddress ?? 0)
        )
        try configuration.apply(environment: environment)
        try configuration.loadJWT(json: json, environment: environment)
        try configuration.loadAccess(json: json, environment: environment)
        try configuration.validate()
        return configuration
    }

    /// Applies the documented `UPGATE_*` overrides.
    mutating func apply(environment: [String: String]) throws(ConfigurationError) {
        if let value = environment["UPGATE_ACCESS_KEY"], !value.isEmpty { accessKey = value }
        if let value = environment["UPGATE_SECRET_KEY"], !value.isEmpty { secretKey = value }
        if let value = environment["UPGATE_BIZ_PUBLIC_BASE_URL"], !value.isEmpty { publicBaseURL = value }
        if let value = environment["UPGATE_UP_HOSTS"], !value.isEmpty {
            upHosts = value.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
        }
        if let value = environment["UPGATE_API_KEYS"], !value.isEmpty {
            for entry in value.split(separator: ",") {
                let parts = entry.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, !parts[1].isEmpty else {
                    throw ConfigurationError("UPGATE_API_KEYS entries must be client=apikey")
                }
                let id = parts[0].trimmingCharacters(in: .whitespaces)
                guard let index = clients.firstIndex(where: { $0.id == id }) else {
                    throw ConfigurationError("UPGATE_API_KEYS names unknown client '\(id)'")
                }
                clients[index].apiKeySHA256 = Self.apiKeyHash(String(parts[1]))
            }
        }
    }

    /// Hex SHA-256 of an API key: the only form in which keys are stored or compared.
    public static func apiKeyHash(_ apiKey: String) -> String {
        Hex.encode(SHA256.hash(Array(apiKey.utf8)))
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context),
            .dataCorrupted(let context):
            let path = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    private struct FileFormat: Decodable {
        var host: String?
        var port: UInt16?
        var dataDirectory: String?
        var publicBaseURL: String?
        var accessKey: String?
        var secretKey: String?
        var upHosts: [String]?
        var clients: [ClientFormat]?
        var rateLimit: RateLimitFormat?
        var replay: ReplayFormat?
        var durableWrites: Bool?
        var threads: Int?
        var maxConnections: Int?
        var headerTimeoutSeconds: Int?
        var maxConnectionsPerAddress: Int?
    }

    private struct RateLimitFormat: Decodable {
        var tokensPerSecond: Double?
        var burst: Double?
    }

    private struct ReplayFormat: Decodable {
        var maxClockSkewSeconds: Int64?
        var requireSignedDate: Bool?
    }

    private struct ClientFormat: Decodable {
        var id: String
        var apiKeySHA256: String?
        var endUser: String?
        var bucket: String
        var keyPrefix: String?
        var fsizeMin: Int64?
        var fsizeLimit: Int64?
        var mimeLimit: String?
        var tokenLifetimeSeconds: Int64?
        var insertOnly: Bool?
        var callbackBodyType: CallbackBodyType?
        var returnBody: String?
        var vars: [String: String]?

        var client: Client {
            Client(
                id: id, apiKeySHA256: apiKeySHA256 ?? "", endUser: endUser, bucket: bucket,
                keyPrefix: keyPrefix ?? "{client}/", fsizeMin: fsizeMin, fsizeLimit: fsizeLimit,
                mimeLimit: mimeLimit, tokenLifetimeSeconds: tokenLifetimeSeconds ?? 3600,
                insertOnly: insertOnly ?? false, callbackBodyType: callbackBodyType ?? .form,
                returnBody: returnBody, vars: vars ?? [:])
        }
    }
}
