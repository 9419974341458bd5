public import NativeStore

/// ``OutboxStore`` on SQLite: one table (its name chosen by the host, created by
/// ``migrations(table:)``) in the host's database, reached through the host's ``SQLiteAccess``.
///
/// Every transition is one conditional statement, so several processes sharing the database
/// file stay apart: a claim is `UPDATE … WHERE id IN (SELECT … claimable … LIMIT n) RETURNING`
/// (SQLite runs it under its one write lock; PostgreSQL would add `FOR UPDATE SKIP LOCKED` to the
/// inner SELECT and keep the rest), and recording an outcome is `UPDATE … WHERE owner = ?` on the
/// claim, so a process whose lease was taken over writes nothing.
public struct SQLiteOutbox: OutboxStore {
    /// The table's name.
    public let table: String
    private let access: any SQLiteAccess

    /// An outbox in `table` of the database behind `access`. The host must have applied
    /// ``migrations(table:)``.
    public init(table: String, access: any SQLiteAccess) {
        self.table = Self.checkedName(table)
        self.access = access
    }

    /// Inserts `message` at `now` into `table` on `database`, inside whatever transaction the
    /// caller has open — how a host writes an entry together with what it is about (up-server:
    /// the object; biz-server: the upload record), all or nothing.
    ///
    /// - Returns: The entry as stored.
    /// - Throws: `SQLiteError` (e.g. the disk is full).
    public static func insert(
        _ message: OutboxMessage, now: Int64, into table: String, in database: SQLiteDatabase
    ) throws -> OutboxEntry {
        let name = checkedName(table)
        let draft = OutboxEntry.enqueued(message, id: 0, now: now)
        try database.run(
            """
            INSERT INTO \(name) (payload, lease_seconds, state, available_at, owner, attempts, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            [.text(message.payload), .integer(message.leaseSeconds)] + stateValues(draft.delivery)
                + [.integer(Int64(draft.attempts)), .integer(now)])
        var entry = draft
        entry.id = database.lastInsertRowID
        return entry
    }

    /// See ``OutboxStore/enqueue(_:now:)``.
    public func enqueue(_ message: OutboxMessage, now: Int64) async throws -> OutboxEntry {
        let table = self.table
        return try await access.perform { database in
            try database.transaction { try Self.insert(message, now: now, into: table, in: database) }
        }
    }

    /// See ``OutboxStore/claimDue(owner:now:limit:)``.
    public func claimDue(owner: String, now: Int64, limit: Int) async throws -> [OutboxEntry] {
        guard limit > 0 else { return [] }  // SQLite reads LIMIT -1 as "no limit"
        let due = """
            SELECT id FROM \(table) WHERE state IN ('pending', 'claimed') AND available_at <= ?2
            ORDER BY available_at, id LIMIT ?3
            """
        let claim = """
            UPDATE \(table) SET state = 'claimed', owner = ?1, available_at = ?2 + lease_seconds, attempts = attempts + 1
            WHERE id IN (\(due)) RETURNING \(Self.columns)
            """
        let bindings: [SQLiteValue] = [.text(owner), .integer(now), .integer(Int64(limit))]
        return try await access.perform { database in
            try database.transaction {
                // RETURNING promises no order: read the due order first, under the same write lock.
                let order = try database.query(due, bindings).map { try $0.integer(0) }
                let claimed = try database.query(claim, bindings).map(Self.entry)
                let position = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) })
                return claimed.sorted { (position[$0.id] ?? .max) < (position[$1.id] ?? .max) }
            }
        }
    }

    /// See ``OutboxStore/expedite(_:owner:now:)``: the machine's `expedite` as one conditional
    /// statement (attempts unchanged).
    public func expedite(_ id: Int64, owner: String, now: Int64) async throws -> OutboxEntry? {
        let sql = """
            UPDATE \(table) SET state = 'claimed', owner = ?1, available_at = ?2 + lease_seconds
            WHERE id = ?3 AND (state = 'pending' OR (state = 'claimed' AND available_at <= ?2))
            RETURNING \(Self.columns)
            """
        let bindings: [SQLiteValue] = [.text(owner), .integer(now), .integer(id)]
        return try await access.perform { database in try database.query(sql, bindings).first.map(Self.entry) }
    }

    /// See ``OutboxStore/record(_:claimedBy:as:outcome:)``.
    public func record(_ id: Int64, claimedBy owner: String, as delivery: OutboxDelivery, outcome: OutboxOutcome)
        async throws -> Bool
    {
        let (error, reply): (String?, String?) = switch outcome {
        case .delivered(let reply): (nil, reply)
        case .failed(let reason): (reason, nil)
        }
        let sql = """
            UPDATE \(table) SET state = ?, available_at = ?, owner = ?, attempts = ?,
                last_error = coalesce(?, last_error), reply = coalesce(?, reply)
            WHERE id = ? AND state = 'claimed' AND owner = ?
            """
        let bindings = Self.stateValues(delivery) + [
            .integer(Int64(delivery.attempts)), error.map { .text($0) } ?? .null, reply.map { .text($0) } ?? .null,
            .integer(id), .text(owner),
        ]
        return try await access.perform { database in
            try database.run(sql, bindings)
            return database.changes == 1
        }
    }

    /// See ``OutboxStore/requeue(_:now:)``.
    public func requeue(_ id: Int64, now: Int64) async throws -> OutboxEntry? {
        var requeued = OutboxDelivery(state: .dead, attempts: 0)
        _ = requeued.handle(.requeue(now: now), schedule: .init(maxAttempts: 1, firstDelay: 0, maxDelay: 0))
        let sql = """
            UPDATE \(table) SET state = ?, available_at = ?, owner = ?, attempts = ?
            WHERE id = ? AND state = 'dead' RETURNING \(Self.columns)
            """
        let bindings = Self.stateValues(requeued) + [.integer(Int64(requeued.attempts)), .integer(id)]
        return try await access.perform { database in try database.query(sql, bindings).first.map(Self.entry) }
    }

    /// See ``OutboxStore/entry(id:)``.
    public func entry(id: Int64) async throws -> OutboxEntry? {
        let sql = "SELECT \(Self.columns) FROM \(table) WHERE id = ?"
        return try await access.perform { database in try database.query(sql, [.integer(id)]).first.map(Self.entry) }
    }

    /// See ``OutboxStore/list(_:before:limit:)``.
    public func list(_ phases: Set<OutboxDelivery.Phase>, before: Int64?, limit: Int) async throws -> [OutboxEntry] {
        guard limit > 0, !phases.isEmpty else { return [] }
        let names = phases.map(\.rawValue).sorted()
        let marks = Array(repeating: "?", count: names.count).joined(separator: ", ")
        let sql = """
            SELECT \(Self.columns) FROM \(table) WHERE state IN (\(marks)) AND id < ?
            ORDER BY id DESC LIMIT ?
            """
        let bindings = names.map { SQLiteValue.text($0) } + [.integer(before ?? .max), .integer(Int64(limit))]
        return try await access.perform { database in try database.query(sql, bindings).map(Self.entry) }
    }

    /// See ``OutboxStore/depth()``.
    public func depth() async throws -> Int {
        let sql = "SELECT count(*) FROM \(table) WHERE state IN ('pending', 'claimed')"
        return try await access.perform { database in Int(try database.query(sql)[0].integer(0)) }
    }
}
