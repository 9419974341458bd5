public import Basics
import Foundation
public import HTTPTransport
import NativeCrypto
import NativeOS

extension UpServer {
    /// Opens a production up-server over `configuration.dataDirectory`: creates the directory,
    /// loads (or creates) the ctx secret, opens the blob store (`blobs/`, or S3) and the index
    /// (`index.sqlite3`, or PostgreSQL: ``openStores(configuration:directory:logger:)``), and
    /// wires HTTP callbacks. Call `start()`/`run()` afterwards.
    ///
    /// - Parameters:
    ///   - configuration: A validated configuration.
    ///   - transport: The HTTP client for callbacks; default ``callbackTransport()``.
    ///   - clock: Time source; default the system clock.
    ///   - logger: Where logs go.
    ///   - metrics: The registry served at `/metrics`.
    ///   - outboxPollInterval: How often the outbox retrier looks for due callbacks.
    /// - Throws: `ConfigurationError` for a bad ctx-secret file, or the store's, index's or
    ///   transport's error when they cannot be opened.
    public static func open(
        configuration: UpServerConfiguration, transport: (any HTTPTransport)? = nil,
        clock: any WallClock = SystemClock(), logger: Logger, metrics: Metrics = Metrics(),
        outboxPollInterval: Duration = .seconds(2)
    ) throws -> UpServer {
        try configuration.validate()
        let directory = URL(fileURLWithPath: configuration.dataDirectory, isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let secret = try contextSecret(configuration: configuration, directory: directory, logger: logger)
        let stores = try openStores(configuration: configuration, directory: directory, logger: logger)
        let credentials = UpCredentials(keys: configuration.keys, buckets: configuration.buckets)
        let callbacks = HTTPCallbackDeliverer(
            credentials: credentials, transport: try transport ?? callbackTransport(), clock: clock,
            timeoutSeconds: configuration.callback.timeoutSeconds, logger: logger)
        return UpServer(
            configuration: configuration, stores: stores,
            callbacks: callbacks, contextSecret: secret,
            clock: clock, logger: logger, metrics: metrics, outboxPollInterval: outboxPollInterval,
            credentials: credentials)
    }

    /// `open(configuration:transport:clock:logger:metrics:outboxPollInterval:)` with every default:
    /// what the shell (`ServiceHost.main`) calls.
    public static func open(configuration: UpServerConfiguration, logger: Logger) throws -> UpServer {
        try open(configuration: configuration, transport: nil, logger: logger)
    }

    /// The HTTP client for callbacks: libcurl with no per-host connection cap. Every upload
    /// that completes calls back synchronously while its own request waits, so the callbacks in
    /// flight are already bounded by the uploads in flight (plus the outbox retrier's one at a
    /// time); a cap would only queue them for a pooled connection, and that wait counts against
    /// the per-URL timeout. With the default cap (16) a wave of 500 small uploads against a busy
    /// biz-server got 579 "timeout" while biz-server answered each callback in < 0.3 s
    /// (scripts/load/run).
    static func callbackTransport() throws(TransportError) -> CurlTransport {
        try CurlTransport(configuration: .init(maxConnectionsPerHost: 0))
    }

    /// Name of the generated secret inside the data directory.
    static let contextSecretFileName = "ctx-secret"

    /// The ctx secret (DESIGN.md: self-verifying ctx): `configuration.contextSecret`, else the
    /// text of `<dataDir>/ctx-secret`, else a new one — 32 random bytes as 64 hex characters,
    /// written with mode 0600 — so ctx values stay valid across restarts (SDKs resume with them,
    /// qiniu-protocol.md §9.4). Either way the secret is the UTF-8 bytes of the text, so the
    /// file's content can be copied into `UPGATE_CTX_SECRET` for other nodes sharing the storage.
    static func contextSecret(
        configuration: UpServerConfiguration, directory: URL, logger: Logger
    ) throws -> [UInt8] {
        if let configured = configuration.contextSecret { return Array(configured.utf8) }
        let file = directory.appendingPathComponent(contextSecretFileName)
        if FileManager.default.fileExists(atPath: file.path) {
            let text: String
            do {
                text = String(decoding: try NativeFile.contents(atPath: file.path), as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            } catch {
                throw ConfigurationError("cannot read the ctx secret \(file.path): \(error.reason)")
            }
            guard text.utf8.count >= 16 else { throw ConfigurationError("\(file.path) holds fewer than 16 bytes") }
            return Array(text.utf8)
        }
        let text = Hex.encode(SecureRandom.bytes(32))
        guard FileManager.default.createFile(
            atPath: file.path, contents: Data((text + "\n").utf8), attributes: [.posixPermissions: 0o600])
        else { throw ConfigurationError("cannot create \(file.path)") }
        logger.info("generated ctx secret", ["path": .string(file.path)])
        return Array(text.utf8)
    }
}
