import Basics
import Foundation
import NativePostgres
import ObjectStorage
public import ServerShell

/// `up-server migrate`: moves an embedded installation (the SQLite index `index.sqlite3` and the
/// blob files under `blobs/` in the data directory) to the configured PostgreSQL `database` and
/// S3 `blobStore` (issue 12 §4): every blob the index names (same `BlobID`, bytes first), then
/// the rows — objects with all their metadata and version, completion records, the callback
/// outbox (those still owed pending and due now in PostgreSQL, delivered and given-up ones as they
/// were, for the admin history), and uploads in progress (v1
/// blocks, v2 uploads and their parts), so a client may resume them on the new stores.
///
/// Idempotent: a blob already in the store whole, a row already there (same key) and a callback
/// already there (same payload) are skipped, so a second run copies nothing and an interrupted
/// one can be run again. Run it with up-server stopped, then start the servers on the new stores
/// (not again after that: it would bring back what the new instances deleted since). Rows are
/// copied one for one (the PostgreSQL tables mirror SQLite's, `PostgresUpIndex.schemaV1`), not
/// through `ObjectIndex.putObject`, which would renumber versions and drop recorded answers.
public enum MigrateCommand {
    /// `--help`.
    public static let usage = """
        up-server migrate — copies an embedded installation (index.sqlite3 and blobs/ in the data
        directory) into the configured PostgreSQL database ("database" or UPGATE_UP_DATABASE_URL)
        and S3 blob store ("blobStore", UPGATE_S3_*): every blob the index names, then objects,
        completion records, callbacks (owed, delivered, given up), v1 blocks and v2 uploads in progress.
        Stop up-server first; start it on the new stores afterwards. Re-running copies nothing
        twice: after a failure, run it again (before up-server starts on the new stores). Every
        instance must then share one contextSecret (ctxs of uploads in progress are signed
        with it).

        USAGE:
          up-server migrate [--config FILE] [--data-dir DIR]

        Exit status: 0 done (one summary line), 64 bad arguments, 78 bad configuration, no
        database or S3 blob store configured, or no index in the data directory; 1 a store failed.
        """

    /// What a run printed and its exit status.
    public typealias Outcome = CommandOutcome

    /// Runs the command with `arguments` (those after `migrate`), prints, and exits.
    public static func main(_ arguments: [String]) async -> Never {
        await run(arguments, environment: ProcessInfo.processInfo.environment).exit()
    }

    /// Runs the command in `environment`.
    public static func run(_ arguments: [String], environment: [String: String]) async -> Outcome {
        let parsed: Arguments
        do {
            parsed = try Arguments(arguments, options: ["config", "data-dir"], flags: ["help"])
        } catch {
            return fail(64, "\(error)\n\n\(usage)")
        }
        if parsed.has("help") { return Outcome(status: 0, output: usage + "\n") }
        if let extra = parsed.positional.first { return fail(64, "unexpected argument '\(extra)'") }
        let configuration: UpServerConfiguration
        let connectionString: PostgresConnectionString
        let settings: S3Settings
        do {
            configuration = try UpServerConfiguration.load(
                path: parsed.value("config") ?? UpServerConfiguration.defaultPath, environment: environment)
            guard let configured = try configuration.databaseConnectionString() else {
                return fail(78, "no database configured: set \"database\" or \(UpServerConfiguration.databaseVariable) to the PostgreSQL URL to copy into")
            }
            guard case .s3(let s3) = configuration.blobStore else {
                return fail(78, "no S3 blob store configured: set \"blobStore\" to {\"type\": \"s3\", \"endpoint\", \"bucket\", …} to copy the blobs into")
            }
            (connectionString, settings) = (configured, s3)
        } catch {
            return fail(78, error.description)
        }
        let directory = URL(fileURLWithPath: parsed.value("data-dir") ?? configuration.dataDirectory, isDirectory: true)
        let indexFile = directory.appendingPathComponent("index.sqlite3").path
        guard FileManager.default.fileExists(atPath: indexFile) else {
            return fail(78, "nothing to migrate: \(indexFile) does not exist (name the old data directory with --data-dir DIR)")
        }
        do {
            let source = try Source(directory: directory)
            let index = PostgresUpIndex(pool: PostgresPool(connectionString))
            defer { index.pool.close() }
            try await index.migrate()
            let blobs = S3BlockStore(
                client: try S3Client(settings: settings, transport: try S3BlockStore.transport()))
            try await blobs.checkBucket()
            let summary = try await copy(from: source, to: Target(index: index, blobs: blobs))
            let secret = configuration.contextSecret != nil
                ? "every instance needs this configuration's contextSecret"
                : "every instance needs the same contextSecret: set it (or UPGATE_CTX_SECRET) to the text of "
                    + directory.appendingPathComponent(UpServer.contextSecretFileName).path
            return Outcome(status: 0, output: summary.line + "; " + secret + "\n")
        } catch {
            return fail(1, "\(error)")
        }
    }

    private static func fail(_ status: Int32, _ message: String) -> Outcome {
        Outcome(status: status, error: "up-server migrate: \(message)\n")
    }
}
