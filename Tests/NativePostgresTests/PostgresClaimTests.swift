import NativePostgres
import Testing

/// What the outbox and webhook stores need: a row claimed by one worker at a time with
/// `FOR UPDATE SKIP LOCKED` and a lease, taken over when the lease expires, and an
/// acknowledgement fenced by the owner so a worker whose lease was taken cannot delete the
/// new owner's claim. Times are passed in (milliseconds), as the stores will pass them.
@Suite struct PostgresClaimTests {
    static let schema = """
        CREATE TABLE outbox (
            id bigserial PRIMARY KEY, payload text NOT NULL,
            owner text, lease_until bigint NOT NULL DEFAULT 0, attempts int NOT NULL DEFAULT 0)
        """
    /// $1 owner, $2 now, $3 lease length. One statement, so it needs no transaction of its own.
    static let claim = """
        UPDATE outbox SET owner = $1, lease_until = $2::bigint + $3::bigint, attempts = attempts + 1
        WHERE id = (SELECT id FROM outbox WHERE lease_until <= $2 ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1)
        RETURNING id, attempts
        """
    static let acknowledge = "DELETE FROM outbox WHERE id = $1 AND owner = $2"

    private func outbox(rows: Int, maxConnections: Int = 4) async throws -> PostgresPool {
        let settings = PostgresConnection.Settings(statementTimeout: .seconds(3))
        let pool = PostgresPool(
            try await testDatabase("claims"), configuration: .init(maxConnections: maxConnections, connection: settings))
        try await pool.withConnection { connection in
            try connection.execute(Self.schema)
            try connection.query("INSERT INTO outbox (payload) SELECT 'm' || g FROM generate_series(1, $1) g", [.integer(Int64(rows))])
        }
        return pool
    }

    @Test func aRowLockedByOneConnectionIsSkippedByAnotherNotWaitedFor() async throws {
        let pool = try await outbox(rows: 2)
        let database = pool.connectionString
        let settings = PostgresConnection.Settings(statementTimeout: .seconds(2))
        let first = try PostgresConnection(database, settings: settings)
        let second = try PostgresConnection(database, settings: settings)
        try first.execute("BEGIN")
        let held = try first.query(Self.claim, ["a", 1000, 30_000]).first?.decode(0, as: Int.self)
        // Without SKIP LOCKED this would wait for the first transaction, until the statement timeout.
        let other = try second.query(Self.claim, ["b", 1000, 30_000]).first?.decode(0, as: Int.self)
        #expect(held == 1)
        #expect(other == 2)
        #expect(try second.query(Self.claim, ["b", 1000, 30_000]).rows.isEmpty)
        try first.execute("COMMIT")
    }

    @Test func concurrentWorkersClaimEveryRowExactlyOnce() async throws {
        let pool = try await outbox(rows: 60)
        let claimed = try await withThrowingTaskGroup(of: [Int].self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var mine: [Int] = []
                    // Bounded: 60 rows, each claim takes one or ends the loop.
                    for _ in 0..<61 {
                        let id = try await pool.withConnection { connection in
                            try connection.query(Self.claim, [.text("w\(worker)"), 1000, 30_000]).first?.decode(0, as: Int.self)
                        }
                        guard let id else { break }
                        mine.append(id)
                    }
                    return mine
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(claimed.sorted() == Array(1...60))
        let unowned = try await pool.withConnection { try $0.query("SELECT count(*) FROM outbox WHERE owner IS NULL").first?.decode(0, as: Int.self) }
        #expect(unowned == 0)
    }

    @Test func anExpiredLeaseIsTakenOverAndTheOldOwnerCannotAcknowledge() async throws {
        let pool = try await outbox(rows: 1)
        let (first, during, takeover, lateAck, ownAck) = try await pool.withConnection { connection in
            let first = try connection.query(Self.claim, ["a", 1000, 500]).first?.decode(0, as: Int.self)
            let during = try connection.query(Self.claim, ["b", 1499, 500]).rows.count
            let takeover = try connection.query(Self.claim, ["b", 1500, 500]).first
            let lateAck = try connection.query(Self.acknowledge, [1, "a"]).rowsAffected
            let ownAck = try connection.query(Self.acknowledge, [1, "b"]).rowsAffected
            return (first, during, takeover, lateAck, ownAck)
        }
        #expect(first == 1)
        #expect(during == 0)
        #expect(try takeover?.decode(0, as: Int.self) == 1)
        #expect(try takeover?.decode(1, as: Int.self) == 2)
        #expect(lateAck == 0)
        #expect(ownAck == 1)
    }
}
