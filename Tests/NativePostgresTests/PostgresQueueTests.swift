import NativePostgres
import Testing

/// `queue(_:_:)`: statements held back for the next round trip (libpq's pipeline mode) must run
/// exactly as if sent one by one — in order, inside their transaction — and a failure among them
/// must still fail the transaction and leave the connection usable.
@Suite struct PostgresQueueTests {
    private func pool() async throws -> PostgresPool {
        let pool = PostgresPool(try await testDatabase(), configuration: .init(maxConnections: 1))
        try await pool.withConnection { try $0.execute("CREATE TABLE t (id int PRIMARY KEY); CREATE SEQUENCE s") }
        return pool
    }

    @Test func queuedStatementsRunInOrderBeforeTheNextQueryAndCommitTogether() async throws {
        let pool = try await pool()
        let seen = try await pool.transaction { connection in
            try connection.queue("INSERT INTO t VALUES ($1)", [1])
            try connection.queue("UPDATE t SET id = $1 WHERE id = $2", [3, 1])
            let seen = try connection.query("SELECT id FROM t").rows.map { try $0.decode(0, as: Int.self) }
            try connection.queue("INSERT INTO t VALUES ($1)", [2])
            return seen
        }
        #expect(seen == [3])
        #expect(try await ids(pool) == [2, 3])
    }

    @Test func aQueuedFailureIsThrownByTheQueryThatSentItAndRollsBackTheTransaction() async throws {
        let pool = try await pool()
        try await pool.withConnection { try $0.query("INSERT INTO t VALUES ($1)", [1]) }
        await #expect(throws: PostgresError(.uniqueViolation)) {
            try await pool.transaction { connection in
                try connection.queue("INSERT INTO t VALUES ($1)", [2])
                try connection.queue("INSERT INTO t VALUES ($1)", [1])
                try connection.queue("INSERT INTO t VALUES ($1)", [3])
                try connection.query("SELECT 1")
            }
        }
        #expect(try await ids(pool) == [1])
    }

    @Test func aQueuedFailureIsThrownByCommitAndTheConnectionStaysUsable() async throws {
        let pool = try await pool()
        let (error, open, after) = try await pool.withConnection { connection in
            try connection.query("INSERT INTO t VALUES ($1)", [1])
            let error = #expect(throws: PostgresError.self) {
                try connection.transaction {
                    try connection.queue("INSERT INTO t VALUES ($1)", [2])
                    try connection.queue("INSERT INTO t VALUES ($1)", [1])
                }
            }
            // On the same connection: out of pipeline mode, out of the failed transaction.
            return (error?.code, connection.isInTransaction, try connection.query("SELECT count(*) FROM t").first?.decode(0, as: Int.self))
        }
        #expect(error == .uniqueViolation)
        #expect(!open)
        #expect(after == 1)
    }

    @Test func aTransactionThatThrowsNeverSendsWhatItQueued() async throws {
        let pool = try await pool()
        struct Abandon: Error {}
        await #expect(throws: Abandon.self) {
            try await pool.transaction { connection in
                // A sequence advances even in a transaction rolled back: it shows what was sent.
                try connection.queue("SELECT nextval('s')")
                throw Abandon()
            }
        }
        let next = try await pool.withConnection { try $0.query("SELECT nextval('s')").first?.decode(0, as: Int.self) }
        #expect(next == 1)
    }

    @Test func aNestedTransactionStillUndoesOnlyItsOwnQueuedWork() async throws {
        let pool = try await pool()
        try await pool.transaction { connection in
            try connection.queue("INSERT INTO t VALUES ($1)", [1])
            let duplicate = Result { try connection.transaction { try connection.queue("INSERT INTO t VALUES ($1)", [1]) } }
            #expect(throws: PostgresError(.uniqueViolation)) { try duplicate.get() }
            try connection.queue("INSERT INTO t VALUES ($1)", [2])
        }
        #expect(try await ids(pool) == [1, 2])
    }

    @Test func outsideATransactionAQueuedStatementRunsAtOnce() async throws {
        let pool = PostgresPool(try await testDatabase(), configuration: .init(maxConnections: 2))
        try await pool.withConnection { try $0.execute("CREATE TABLE t (id int PRIMARY KEY)") }
        try await pool.withConnection { connection in
            try connection.queue("INSERT INTO t VALUES ($1)", [1])
            #expect(!connection.isInTransaction)
        }
        #expect(try await ids(pool) == [1])
    }

    @Test func moreStatementsThanTheQueueHoldsAllRun() async throws {
        let pool = try await pool()
        try await pool.transaction { connection in
            for id in 1...200 { try connection.queue("INSERT INTO t VALUES ($1)", [.integer(Int64(id))]) }
        }
        #expect(try await ids(pool) == Array(1...200))
    }
}
