public import NativePostgres
public import ObjectStorage
import ServerShell
public import Basics

extension UpServerConfiguration {
    /// Where blobs live.
    public enum BlobStore: Sendable {
        /// Files under `<dataDirectory>/blobs` (`FileBlockStore`).
        case disk
        /// Objects in an S3-compatible bucket (`S3BlockStore`).
        case s3(S3Settings)

        /// What identifies the store, for reload comparisons and logs (no secret).
        var summary: String {
            switch self {
            case .disk: "disk"
            case .s3(let settings): "s3 \(settings.endpoint)/\(settings.bucket) (\(settings.region))"
            }
        }
    }

    /// The environment variable that sets (and overrides) `"database"`.
    public static let databaseVariable = "UPGATE_UP_DATABASE_URL"

    /// The checked connection string of ``database``, nil for SQLite (`DatabaseSetting`, shared
    /// with biz-server).
    /// - Throws: `ConfigurationError` naming the key and what to do.
    public func databaseConnectionString() throws(ConfigurationError) -> PostgresConnectionString? {
        try DatabaseSetting.connectionString(database)
    }

    /// Reads `"database"` (the environment's ``databaseVariable`` wins) and `"blobStore"`.
    static func readStores(
        _ file: ConfigurationObject, environment: [String: String]
    ) throws(ConfigurationError) -> (database: String?, blobStore: BlobStore) {
        let database = try DatabaseSetting.read(file, variable: databaseVariable, environment: environment)
        guard let object = try file.object("blobStore") else { return (database, .disk) }
        switch try object.requiredString("type") {
        case "disk":
            return (database, .disk)
        case "s3":
            let settings = S3Settings(
                endpoint: try object.requiredString("endpoint"), region: try object.string("region") ?? "us-east-1",
                bucket: try object.requiredString("bucket"),
                credentials: S3Credentials(
                    accessKeyId: try object.string("accessKeyId") ?? "",
                    secretAccessKey: try object.string("secretAccessKey") ?? ""),
                payloadIntegrity: try object.choice("payloadIntegrity", as: S3Settings.PayloadIntegrity.self))
            return (database, .s3(settings.applyingEnvironment(environment)))
        case let other:
            throw object.invalid("type", "must be \"s3\" or \"disk\", got \"\(other)\"")
        }
    }
}
