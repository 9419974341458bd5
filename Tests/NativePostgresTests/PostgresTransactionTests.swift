import NativePostgres
import Testing

@Suite struct PostgresTransactionTests {
    struct Abandon: Error {}

    private func pool() async throws -> PostgresPool {
        let pool = PostgresPool(try await testDatabase(), configuration: .init(maxConnections: 2))
        try await pool.withConnection { try $0.execute("CREATE TABLE t (id int PRIMARY KEY)") }
        return pool
    }

    @Test func aTransactionThatReturnsIsCommitted() async throws {
        let pool = try await pool()
        try await pool.transaction { connection in
            try connection.query("INSERT INTO t VALUES ($1)", [1])
            try connection.query("INSERT INTO t VALUES ($1)", [2])
        }
        #expect(try await ids(pool) == [1, 2])
    }

    @Test func aTransactionThatThrowsIsRolledBack() async throws {
        let pool = try await pool()
        let (open, count) = try await pool.withConnection { connection in
            #expect(throws: Abandon.self) {
                try connection.transaction {
                    try connection.query("INSERT INTO t VALUES ($1)", [1])
                    throw Abandon()
                }
            }
            // Checked on the same connection, before the pool would clean up after it.
            return (connection.isInTransaction, try connection.query("SELECT count(*) FROM t").first?.decode(0, as: Int.self))
        }
        #expect(!open)
        #expect(count == 0)
    }

    @Test func aFailedStatementAbortsTheTransactionEvenIfTheErrorIsCaught() async throws {
        let pool = try await pool()
        try await pool.withConnection { try $0.query("INSERT INTO t VALUES ($1)", [1]) }
        await #expect(throws: PostgresError(.transactionAborted)) {
            try await pool.transaction { connection in
                try connection.query("INSERT INTO t VALUES ($1)", [2])
                _ = try? connection.query("INSERT INTO t VALUES ($1)", [1])
            }
        }
        #expect(try await ids(pool) == [1])
    }

    @Test func aNestedTransactionUndoesOnlyItsOwnWork() async throws {
        let pool = try await pool()
        try await pool.transaction { connection in
            try connection.query("INSERT INTO t VALUES ($1)", [1])
            // The expected duplicate is caught inside its own savepoint, so the outer work stays.
            let duplicate = Result { try connection.transaction { try connection.query("INSERT INTO t VALUES ($1)", [1]) } }
            #expect(throws: PostgresError(.uniqueViolation)) { try duplicate.get() }
            try connection.query("INSERT INTO t VALUES ($1)", [2])
        }
        #expect(try await ids(pool) == [1, 2])
    }

    @Test func aTransactionLeftOpenIsRolledBackBeforeTheConnectionIsReused() async throws {
        let pool = PostgresPool(try await testDatabase(), configuration: .init(maxConnections: 1))
        try await pool.withConnection { connection in
            try connection.execute("CREATE TABLE t (id int)")
            try connection.execute("BEGIN")
            try connection.query("INSERT INTO t VALUES ($1)", [1])
        }
        let (open, count) = try await pool.withConnection { connection in
            (connection.isInTransaction, try connection.query("SELECT count(*) FROM t").first?.decode(0, as: Int.self))
        }
        #expect(!open)
        #expect(count == 0)
    }

    @Test func aSerializationFailureIsRetryable() async throws {
        let pool = PostgresPool(try await testDatabase(), configuration: .init(maxConnections: 2))
        try await pool.withConnection { connection in
            try connection.execute("CREATE TABLE counter (n int); INSERT INTO counter VALUES (0)")
        }
        let database = pool.connectionString
        // Two REPEATABLE READ transactions update the same row: the second writer loses.
        let error = try #require(throws: PostgresError.self) {
            let first = try PostgresConnection(database)
            let second = try PostgresConnection(database)
            try first.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            try second.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            try first.query("SELECT n FROM counter")
            try second.query("SELECT n FROM counter")
            try first.query("UPDATE counter SET n = n + 1")
            try first.execute("COMMIT")
            try second.query("UPDATE counter SET n = n + 1")
        }
        #expect(error.code == .serializationFailure)
        #expect(error.isRetryable)
    }
}
