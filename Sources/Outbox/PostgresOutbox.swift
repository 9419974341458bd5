public import NativePostgres

/// ``OutboxStore`` on PostgreSQL: one table (named by the host, created by
/// ``migrations(table:)``) in the host's database, reached through the host's ``PostgresPool``,
/// so several instances share one outbox.
///
/// Every transition is one conditional statement. A claim is
/// `WITH due AS (SELECT … FOR UPDATE SKIP LOCKED LIMIT n) UPDATE … FROM due RETURNING …`: two
/// instances claiming at once lock disjoint rows and neither waits for the other; an expired
/// lease is just another claimable row. Recording an outcome is `UPDATE … WHERE owner = $me` on
/// the claim, so an instance whose lease was taken over writes nothing.
public struct PostgresOutbox: OutboxStore {
    /// The table's name.
    public let table: String
    private let pool: PostgresPool

    /// An outbox in `table` of the database behind `pool`. The host must have applied
    /// ``migrations(table:)``.
    public init(table: String, pool: PostgresPool) {
        self.table = SQLiteOutbox.checkedName(table)
        self.pool = pool
    }

    /// Inserts `message` at `now` into `table` on `connection`, inside whatever transaction the
    /// caller has open: how a host writes an entry with what it is about, all or nothing.
    ///
    /// - Returns: The entry as stored.
    /// - Throws: ``PostgresError`` (e.g. a CHECK refuses the row).
    public static func insert(
        _ message: OutboxMessage, now: Int64, into table: String, on connection: PostgresConnection
    ) throws -> OutboxEntry {
        let name = SQLiteOutbox.checkedName(table)
        let draft = OutboxEntry.enqueued(message, id: 0, now: now)
        let row = try connection.query(
            """
            INSERT INTO \(name) (payload, lease_seconds, state, available_at, owner, attempts, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id
            """,
            [.text(message.payload), .integer(message.leaseSeconds)] + stateValues(draft.delivery)
                + [.integer(Int64(draft.attempts)), .integer(now)]
        ).first
        var entry = draft
        entry.id = try row?.decode(0) ?? 0
        return entry
    }

    /// See ``OutboxStore/enqueue(_:now:)``.
    public func enqueue(_ message: OutboxMessage, now: Int64) async throws -> OutboxEntry {
        let table = self.table
        return try await pool.withConnection { try Self.insert(message, now: now, into: table, on: $0) }
    }

    /// See ``OutboxStore/claimDue(owner:now:limit:)``.
    public func claimDue(owner: String, now: Int64, limit: Int) async throws -> [OutboxEntry] {
        guard limit > 0 else { return [] }
        // The CTE keeps each row's due time so the answer can be put in due order (RETURNING
        // promises none).
        let sql = """
            WITH due AS (
                SELECT id, available_at AS due_at FROM \(table)
                WHERE state IN ('pending', 'claimed') AND available_at <= $2
                ORDER BY available_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
            UPDATE \(table) AS t SET state = 'claimed', owner = $1, available_at = $2 + t.lease_seconds,
                attempts = t.attempts + 1
            FROM due WHERE t.id = due.id
            RETURNING t.id, t.payload, t.lease_seconds, t.state, t.available_at, t.owner, t.attempts, t.last_error,
                t.reply, t.created_at, due.due_at
            """
        let bindings: [PostgresValue] = [.text(owner), .integer(now), .integer(Int64(limit))]
        let rows = try await pool.withConnection { try $0.query(sql, bindings).rows }
        return try rows.map { (entry: try Self.entry($0), due: try $0.decode(10, as: Int64.self)) }
            .sorted { ($0.due, $0.entry.id) < ($1.due, $1.entry.id) }
            .map(\.entry)
    }

    /// See ``OutboxStore/expedite(_:owner:now:)``: the machine's `expedite` as one conditional
    /// statement (attempts unchanged). Two instances expediting at once: the second's UPDATE
    /// waits for the first's row lock, re-checks the WHERE on the claimed row and changes nothing.
    public func expedite(_ id: Int64, owner: String, now: Int64) async throws -> OutboxEntry? {
        let sql = """
            UPDATE \(table) SET state = 'claimed', owner = $1, available_at = $2 + lease_seconds
            WHERE id = $3 AND (state = 'pending' OR (state = 'claimed' AND available_at <= $2))
            RETURNING \(Self.columns)
            """
        let bindings: [PostgresValue] = [.text(owner), .integer(now), .integer(id)]
        return try await pool.withConnection { try $0.query(sql, bindings).first.map(Self.entry) }
    }

    /// See ``OutboxStore/record(_:claimedBy:as:outcome:)``.
    public func record(_ id: Int64, claimedBy owner: String, as delivery: OutboxDelivery, outcome: OutboxOutcome)
        async throws -> Bool
    {
        let (error, reply): (String?, String?) = switch outcome {
        case .delivered(let reply): (nil, reply)
        case .failed(let reason), .abandoned(let reason): (reason, nil)
        }
        let sql = """
            UPDATE \(table) SET state = $1, available_at = $2, owner = $3, attempts = $4,
                last_error = coalesce($5, last_error), reply = coalesce($6, reply)
            WHERE id = $7 AND state = 'claimed' AND owner = $8
            """
        let bindings = Self.stateValues(delivery) + [
            .integer(Int64(delivery.attempts)), PostgresValue(error), PostgresValue(reply), .integer(id), .text(owner),
        ]
        return try await pool.withConnection { try $0.query(sql, bindings).rowsAffected == 1 }
    }

    /// See ``OutboxStore/requeue(_:now:)``.
    public func requeue(_ id: Int64, now: Int64) async throws -> OutboxEntry? {
        var requeued = OutboxDelivery(state: .dead, attempts: 0)
        _ = requeued.handle(.requeue(now: now), schedule: .init(maxAttempts: 1, firstDelay: 0, maxDelay: 0))
        let sql = """
            UPDATE \(table) SET state = $1, available_at = $2, owner = $3, attempts = $4
            WHERE id = $5 AND state = 'dead' RETURNING \(Self.columns)
            """
        let bindings = Self.stateValues(requeued) + [.integer(Int64(requeued.attempts)), .integer(id)]
        return try await pool.withConnection { try $0.query(sql, bindings).first.map(Self.entry) }
    }

    /// See ``OutboxStore/entry(id:)``.
    public func entry(id: Int64) async throws -> OutboxEntry? {
        let sql = "SELECT \(Self.columns) FROM \(table) WHERE id = $1"
        return try await pool.withConnection { try $0.query(sql, [.integer(id)]).first.map(Self.entry) }
    }

    /// See ``OutboxStore/list(_:before:limit:)``.
    public func list(_ phases: Set<OutboxDelivery.Phase>, before: Int64?, limit: Int) async throws -> [OutboxEntry] {
        guard limit > 0, !phases.isEmpty else { return [] }
        let names = phases.map(\.rawValue).sorted()
        let marks = names.indices.map { "$\($0 + 3)" }.joined(separator: ", ")
        let sql = """
            SELECT \(Self.columns) FROM \(table) WHERE id < $1 AND state IN (\(marks))
            ORDER BY id DESC LIMIT $2
            """
        let bindings = [.integer(before ?? .max), .integer(Int64(limit))] + names.map { PostgresValue.text($0) }
        return try await pool.withConnection { try $0.query(sql, bindings).rows.map(Self.entry) }
    }

    /// See ``OutboxStore/depth()``.
    public func depth() async throws -> Int {
        let sql = "SELECT count(*) FROM \(table) WHERE state IN ('pending', 'claimed')"
        return try await pool.withConnection { try $0.query(sql).first?.decode(0, as: Int.self) ?? 0 }
    }
}
