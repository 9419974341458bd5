import NativePostgres
import Outbox
import Testing

/// The PostgreSQL implementation beyond the contract: two instances (two pools, as two
/// processes) claiming at once, and entries written inside a host's transaction.
@Suite("PostgresOutbox")
struct PostgresOutboxTests {
    @Test func twoInstancesClaimingAtOnceNeverShareAnEntry() async throws {
        let pool = try await OutboxImplementation.postgresPool(maxConnections: 2)
        defer { pool.close() }
        let other = PostgresPool(pool.connectionString, configuration: .init(maxConnections: 2))
        defer { other.close() }
        let one = PostgresOutbox(table: TestDatabase.table, pool: pool)
        let two = PostgresOutbox(table: TestDatabase.table, pool: other)
        for index in 0..<120 { _ = try await one.enqueue(OutboxMessage(payload: "m\(index)", leaseSeconds: 30), now: 100) }
        async let first = Self.drain(one, owner: "one")
        async let second = Self.drain(two, owner: "two")
        async let third = Self.drain(two, owner: "three")
        let (a, b, c) = try await (first, second, third)
        #expect(a.count + b.count + c.count == 120)
        #expect(Set(a + b + c).count == 120)
        #expect(try await one.depth() == 120)  // all claimed, none delivered
        #expect(try await two.claimDue(owner: "late", now: 100, limit: 10).isEmpty)
        // Every lease runs out at 130: the other instance takes them all over.
        #expect(try await two.claimDue(owner: "late", now: 130, limit: 200).count == 120)
    }

    /// Claims two at a time until nothing is due; the ids claimed.
    static func drain(_ store: PostgresOutbox, owner: String) async throws -> [Int64] {
        var ids: [Int64] = []
        for _ in 0..<200 {
            let claimed = try await store.claimDue(owner: owner, now: 100, limit: 2)
            if claimed.isEmpty { break }
            ids += claimed.map(\.id)
        }
        return ids
    }

    @Test func anEntryInsertedInAHostTransactionGoesWithIt() async throws {
        let pool = try await OutboxImplementation.postgresPool()
        defer { pool.close() }
        let store = PostgresOutbox(table: TestDatabase.table, pool: pool)
        struct Abort: Error {}
        await #expect(throws: Abort.self) {
            try await pool.transaction { connection in
                _ = try PostgresOutbox.insert(
                    OutboxMessage(payload: "rolled back", leaseSeconds: 5), now: 1, into: TestDatabase.table, on: connection)
                throw Abort()
            }
        }
        #expect(try await store.depth() == 0)
        let kept = try await pool.transaction { connection in
            try PostgresOutbox.insert(
                OutboxMessage(payload: "kept", leaseSeconds: 5, claimedBy: "host"), now: 1, into: TestDatabase.table,
                on: connection)
        }
        #expect(try await store.entry(id: kept.id) == kept)
        #expect(kept.delivery.state == .claimed(owner: "host", leaseUntil: 6))
        // The table refuses what the machine never makes: a claim without an owner.
        await #expect(throws: PostgresError(.constraintViolation)) {
            try await pool.withConnection { connection in
                try connection.execute(
                    """
                    INSERT INTO \(TestDatabase.table) (payload, lease_seconds, state, available_at, owner, attempts, created_at)
                    VALUES ('x', 5, 'claimed', 10, NULL, 1, 1)
                    """)
            }
        }
    }
}
