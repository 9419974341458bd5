public import NativePostgres
import Outbox

/// biz-server's state in one PostgreSQL database (issue 12 §1), shared by every instance:
/// upload records and their webhook deliveries (``PostgresUploadRecordStore``), API keys
/// (``PostgresAPIKeyStore``) and token buckets (``PostgresRateLimiter``), all over one pool.
///
/// The schema is applied by ``migrate()`` (versioned in `biz_schema_migrations`, under
/// PostgreSQL's advisory lock, so two instances starting together take turns). The tables are
/// the SQLite stores' (same names, columns and constraints), so `biz-server migrate` copies rows
/// one for one; they do not collide with up-server's, so both servers may share a database.
public final class PostgresBizDatabase: Sendable {
    /// The connections.
    public let pool: PostgresPool

    /// The database behind `pool`; call ``migrate()`` before serving.
    public init(pool: PostgresPool) { self.pool = pool }

    /// Opens a pool on `connectionString` (nothing is contacted yet).
    public convenience init(_ connectionString: PostgresConnectionString) {
        self.init(pool: PostgresPool(connectionString))
    }

    /// Brings the schema up to date; returns how many migrations ran.
    @discardableResult
    public func migrate() async throws -> Int {
        try await pool.migrate(Self.migrations, table: "biz_schema_migrations")
    }

    /// The upload records and webhook deliveries.
    public var records: PostgresUploadRecordStore { PostgresUploadRecordStore(pool: pool) }
    /// The API keys.
    public var keys: PostgresAPIKeyStore { PostgresAPIKeyStore(pool: pool) }
    /// The shared token buckets, one limiter per scope.
    public var rateLimits: RateLimitFactory {
        { [pool] scope, rate in PostgresRateLimiter(pool: pool, scope: scope, rate: rate) }
    }

    /// Deletes the token buckets that have refilled completely by `now` (Unix seconds): they are
    /// the same as missing ones, and end users come and go. The server runs it every minute.
    /// - Returns: How many rows went.
    @discardableResult
    public func pruneRateBuckets(now: Double) async throws -> Int {
        try await pool.withConnection { connection in
            try connection.query(
                "DELETE FROM biz_rate_buckets WHERE tokens + greatest(0, $1::float8 - updated_at) * rate >= burst",
                [.double(now)]
            ).rowsAffected
        }
    }

    /// Schema history, applied in order; only ever append.
    static let migrations = [
        """
        CREATE TABLE upload_records (
            id bigserial PRIMARY KEY,       -- insertion order, for newest-first listing
            public_id text NOT NULL UNIQUE, -- the id clients see
            client_id text NOT NULL,
            bucket text NOT NULL,
            object_key text NOT NULL,
            hash text NOT NULL,
            fsize bigint NOT NULL,
            mime_type text NOT NULL,
            fname text NOT NULL,
            end_user text NOT NULL,
            trace_id text NOT NULL,
            vars text NOT NULL,             -- JSON object of the x: variables
            received_at bigint NOT NULL
        );
        CREATE UNIQUE INDEX upload_records_object ON upload_records (bucket, object_key, hash);
        CREATE INDEX upload_records_client ON upload_records (client_id, id);
        CREATE INDEX upload_records_client_key ON upload_records (client_id, object_key);
        CREATE INDEX upload_records_client_trace ON upload_records (client_id, trace_id);
        CREATE INDEX upload_records_client_user ON upload_records (client_id, end_user, received_at);

        CREATE TABLE api_keys (
            id text PRIMARY KEY,
            client_id text NOT NULL,
            name text NOT NULL,
            key_sha256 text NOT NULL UNIQUE,
            created_at bigint NOT NULL,
            expires_at bigint,
            revoked_at bigint
        );
        -- One row: bumped in the transaction of every change, read by servers a few times a second.
        CREATE TABLE api_key_changes (
            singleton integer PRIMARY KEY CHECK (singleton = 1),
            version bigint NOT NULL
        );
        INSERT INTO api_key_changes (singleton, version) VALUES (1, 0);

        -- Token buckets (PostgresRateLimiter): one row per client or end user. UNLOGGED: no WAL
        -- write or flush per token request; a crash (or a failover: standbys do not have it)
        -- empties the table, which only refills every bucket once.
        CREATE UNLOGGED TABLE biz_rate_buckets (
            scope text NOT NULL,
            bucket_key text NOT NULL,
            tokens float8 NOT NULL,
            updated_at float8 NOT NULL,
            allowed boolean NOT NULL,       -- the last take's outcome, returned by the same statement
            rate float8 NOT NULL,           -- the last take's rate and burst: what pruneRateBuckets needs
            burst float8 NOT NULL,
            PRIMARY KEY (scope, bucket_key)
        );
        """,
        PostgresOutbox.migrations(table: WebhookMessage.table)[0],
        // PostgresRateLimiter spends a batch of takes per statement and returns how many it
        // granted; PostgreSQL 15 has no OLD in RETURNING, so the count is stored. `allowed` stays
        // (now: the batch got at least one) for instances of the previous version still running.
        """
        ALTER TABLE biz_rate_buckets ADD COLUMN granted integer NOT NULL DEFAULT 0;
        """,
    ]
}
