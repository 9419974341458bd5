import Foundation
public import Basics
import HTTPKit
import NativeCrypto
public import ServerShell
public import NativePostgres

/// Loading ``BizServerConfiguration`` from `Config/biz-server.json` and the environment.
///
/// The file is read strictly (`ConfigurationObject`): a key that is not in this table stops the
/// server with `unknown key "prot" in Config/biz-server.json (did you mean "port"?)`, nested
/// keys too (`clients[0].keyprefix`); keys starting with `_` are comments. All keys are
/// optional unless marked:
///
/// | key | default |
/// |---|---|
/// | `host`, `port`, `dataDirectory`, `publicBaseURL`, `threads`, connection limits, `cors`, `trustedProxies` | `CommonSettings` (port `8080`, `data/biz`) |
/// | `accessKey`, `secretKey` | required here or in the environment |
/// | `upHosts` | `["http://127.0.0.1:9000"]` |
/// | `rateLimit` | `{"tokensPerSecond": 10, "burst": 20}` |
/// | `replay` | `{"maxClockSkewSeconds": 300, "requireSignedDate": false}` |
/// | `durableWrites` | `true` |
/// | `database` | none (SQLite in `<dataDirectory>`); `postgresql://user@host:5432/db`, no password; `UPGATE_BIZ_DATABASE_URL` wins |
/// | `adminTokenSHA256`, `trustedProxies`, `addressRateLimit` | see ``BizServerConfiguration/Access`` |
/// | `clients[]` | `id`, `bucket` required; `apiKeySHA256` (or `UPGATE_API_KEYS`; none: only stored keys); `endUser`, `keyPrefix` (`"{client}/"`), `fsizeMin`, `fsizeLimit`, `mimeLimit`, `tokenLifetimeSeconds` (3600), `insertOnly` (false), `callbackBodyType` (`"form"` or `"json"`), `returnBody`, `vars` ({}) |
///
/// The `jwt` block and the per-user client keys are read in `BizServerConfiguration+JWT.swift`,
/// `webhooks[]` in `BizServerConfiguration+Webhooks.swift`.
/// A new block is one more read in ``read(_:environment:)`` (`try file.object("…")`, then its
/// keys); the shell's `finish()` checks its keys like the others.
///
/// Environment variables override the file, so production secrets never need to be in it:
///
/// | variable | meaning |
/// |---|---|
/// | `UPGATE_ACCESS_KEY`, `UPGATE_SECRET_KEY` | Qiniu AK / SK: both or neither (one alone stops the server) |
/// | `UPGATE_API_KEYS` | `client=apikey,client2=apikey2`: plaintext keys, hashed at load |
/// | `UPGATE_ADMIN_TOKEN` | the admin API's token (≥ 16 characters), hashed at load |
/// | `UPGATE_BIZ_PUBLIC_BASE_URL` | `publicBaseURL` |
/// | `UPGATE_UP_HOSTS` | comma-separated `upHosts` |
extension BizServerConfiguration {
    /// Reads every key of the file (the shell refuses the others) and applies the environment.
    public static func read(
        _ file: ConfigurationObject, environment: [String: String]
    ) throws(ConfigurationError) -> BizServerConfiguration {
        var clients: [Client] = []
        var perUser: [(client: String, limits: JWTConfiguration.PerUserLimits)] = []
        for entry in try file.objects("clients") ?? [] {
            let client = try client(entry)
            clients.append(client)
            perUser.append((client.id, try perUserLimits(entry)))
        }
        let rate = try file.object("rateLimit")
        let replay = try file.object("replay")
        let common = try CommonSettings.read(file, defaultPort: 8080, defaultDataDirectory: "data/biz")
        var configuration = BizServerConfiguration(
            host: common.host, port: common.port, dataDirectory: common.dataDirectory, publicBaseURL: common.publicBaseURL,
            accessKey: try file.string("accessKey") ?? "",
            secretKey: try file.string("secretKey") ?? "",
            upHosts: try file.strings("upHosts") ?? ["http://127.0.0.1:9000"],
            clients: clients,
            rateLimit: RateLimit(
                tokensPerSecond: try rate?.number("tokensPerSecond") ?? 10, burst: try rate?.number("burst") ?? 20),
            replay: ReplayProtection(
                maxClockSkewSeconds: try replay?.integer("maxClockSkewSeconds", as: Int64.self) ?? 300,
                requireSignedDate: try replay?.bool("requireSignedDate") ?? false),
            durableWrites: try file.bool("durableWrites") ?? true,
            threads: common.threads, connections: common.connections)
        configuration.cors = common.cors
        configuration.database = try DatabaseSetting.read(file, variable: databaseVariable, environment: environment)
        _ = try configuration.databaseConnectionString()  // a bad URL stops the server at load
        try configuration.apply(environment: environment)
        try configuration.readJWT(try file.object("jwt"), perUser: perUser, environment: environment)
        try configuration.readAccess(file, trustedProxies: common.trustedProxies, environment: environment)
        try configuration.readWebhooks(file)
        return configuration
    }

    private static func client(_ entry: ConfigurationObject) throws(ConfigurationError) -> Client {
        Client(
            id: try entry.requiredString("id"), apiKeySHA256: try entry.string("apiKeySHA256") ?? "",
            endUser: try entry.string("endUser"), bucket: try entry.requiredString("bucket"),
            keyPrefix: try entry.string("keyPrefix") ?? "{client}/",
            fsizeMin: try entry.integer("fsizeMin", as: Int64.self),
            fsizeLimit: try entry.integer("fsizeLimit", as: Int64.self),
            mimeLimit: try entry.string("mimeLimit"),
            tokenLifetimeSeconds: try entry.integer("tokenLifetimeSeconds", as: Int64.self) ?? 3600,
            insertOnly: try entry.bool("insertOnly") ?? false,
            callbackBodyType: try entry.choice("callbackBodyType", as: CallbackBodyType.self) ?? .form,
            returnBody: try entry.string("returnBody"), vars: try entry.stringMap("vars") ?? [:])
    }

    /// The environment variable that sets (and overrides) `"database"`.
    public static let databaseVariable = "UPGATE_BIZ_DATABASE_URL"

    /// The checked connection string of ``database``, nil for SQLite (`DatabaseSetting`).
    public func databaseConnectionString() throws(ConfigurationError) -> PostgresConnectionString? {
        try DatabaseSetting.connectionString(database)
    }

    /// Applies the documented `UPGATE_*` overrides.
    mutating func apply(environment: [String: String]) throws(ConfigurationError) {
        if let pair = try KeyPairVariables.read(environment) {
            accessKey = pair.accessKey
            secretKey = pair.secretKey
        }
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
        Hex.encode(apiKeyDigest(apiKey))
    }

    /// The SHA-256 of an API key, as bytes (``apiKeyHash(_:)`` is its hex).
    static func apiKeyDigest(_ apiKey: String) -> [UInt8] {
        SHA256.hash(Array(apiKey.utf8))
    }
}
