public import Basics
import Foundation
public import ServerShell
import UpCore

/// `biz-server keys create|list|revoke`: API keys managed in the store of a biz-server — running
/// or not — through the same `APIKeyManager` as the admin API. A running server on the same data
/// directory honours a change within a poll interval (250 ms), without a restart.
///
/// Exit status: 0 done, 64 bad arguments (an unknown client, a bad `--expires` too), 78 the
/// configuration cannot be loaded, 2 no such key or a configured (read-only) one, 1 the store
/// failed.
public enum KeysCommand {
    /// `--help`.
    public static let usage = """
        biz-server keys — API keys in the key store (the configured database, else data directory/keys.sqlite3).

        USAGE:
          biz-server keys create --client ID [--name NAME] [--expires 90d] [OPTIONS]
          biz-server keys list [--client ID] [OPTIONS]
          biz-server keys revoke KEY-ID [OPTIONS]

        create prints a new key (upk_…) once; only its SHA-256 is stored. A client may have several
        keys at once, so a key is rotated by creating a new one, deploying it, then revoking the old.
        list shows every key without the keys themselves, configured ones as read-only (config:ID).
        --expires takes \(KeyLifetime.help).

        OPTIONS:
          --config FILE    JSON configuration (default Config/biz-server.json), as for the server
          --data-dir DIR   the server's data directory (default: the configuration's dataDirectory)
          --json           print JSON: create {"id", "key", "client", …}, list an array, revoke the key
          --help           this text

        Exit status: 0 done, 64 bad arguments, 78 bad configuration, 2 no such key or read-only, 1 store failure.
        """

    /// What a run printed and its exit status.
    public typealias Outcome = CommandOutcome

    /// Runs the command with `arguments` (those after `keys`), prints, and exits.
    public static func main(_ arguments: [String]) async -> Never {
        await run(arguments, environment: ProcessInfo.processInfo.environment).exit()
    }

    /// Runs the command with `arguments` (those after `keys`) in `environment` at `clock`'s time.
    public static func run(
        _ arguments: [String], environment: [String: String], clock: any WallClock = SystemClock()
    ) async -> Outcome {
        let parsed: Arguments
        do {
            parsed = try Arguments(
                arguments, options: ["config", "data-dir", "client", "name", "expires"], flags: ["json", "help"])
        } catch {
            return fail(64, "\(error)\n\n\(usage)")
        }
        if parsed.has("help") { return Outcome(status: 0, output: usage + "\n") }
        let verb = parsed.positional.first ?? ""
        let operands = Array(parsed.positional.dropFirst())
        let allowed: Set<String>
        switch verb {
        case "create": allowed = ["client", "name", "expires"]
        case "list": allowed = ["client"]
        case "revoke": allowed = []
        case "": return fail(64, "missing command: create, list or revoke\n\n\(usage)")
        default: return fail(64, "unknown command '\(verb)': create, list or revoke")
        }
        if let option = ["client", "name", "expires"].first(where: { parsed.value($0) != nil && !allowed.contains($0) }) {
            return fail(64, "--\(option) does not apply to keys \(verb)")
        }
        guard operands.count == (verb == "revoke" ? 1 : 0) else {
            return fail(64, verb == "revoke" ? "keys revoke takes one KEY-ID" : "unexpected argument '\(operands[0])'")
        }
        if verb == "create", parsed.value("client") == nil { return fail(64, "keys create needs --client ID") }

        let configPath = parsed.value("config") ?? "Config/biz-server.json"
        let configuration: BizServerConfiguration
        do {
            configuration = try BizServerConfiguration.load(path: configPath, environment: environment)
        } catch {
            return fail(78, error.description)
        }
        let directory = parsed.value("data-dir") ?? configuration.dataDirectory
        let store: any APIKeyStore
        do {
            if let connectionString = try configuration.databaseConnectionString() {
                // The servers' shared database (`database`): every instance's poller sees the change.
                let database = PostgresBizDatabase(connectionString)
                try await database.migrate()
                store = database.keys
            } else {
                store = try SQLiteAPIKeyStore(directory: directory, durableWrites: configuration.durableWrites)
            }
        } catch {
            return fail(1, "cannot open the key store in \(configuration.database.map { _ in "the database" } ?? directory): \(error)")
        }
        let manager = APIKeyManager(store: store, clients: configuration.clients)
        let now = clock.unixSeconds
        let json = parsed.has("json")
        do throws(BizError) {
            switch verb {
            case "create":
                let created = try await manager.create(
                    client: parsed.value("client") ?? "", name: parsed.value("name"), expires: parsed.value("expires"),
                    now: clock.now())
                return Outcome(status: 0, output: json ? created.json.serialized() + "\n" : KeysText.created(created))
            case "list":
                let keys = try await manager.list(client: parsed.value("client"), now: now)
                return Outcome(status: 0, output: json ? JSONValue.array(keys.map(\.json)).serialized() + "\n" : KeysText.table(keys))
            default:
                let revoked = try await manager.revoke(id: operands[0], now: now)
                return Outcome(status: 0, output: json ? revoked.json.serialized() + "\n" : KeysText.revoked(revoked))
            }
        } catch {
            let status: Int32 = switch error.status {
            case 400: 64
            case 404, 409: 2
            default: 1
            }
            let detail = error.detail.isEmpty || error.status != 503 ? "" : " (\(error.detail))"
            return fail(status, (error.status == 404 ? "\(operands.first ?? ""): " : "") + error.message + detail)
        }
    }

    private static func fail(_ status: Int32, _ message: String) -> Outcome {
        Outcome(status: status, error: "biz-server keys: \(message)\n")
    }
}
