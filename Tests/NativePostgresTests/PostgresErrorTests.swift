import NativePostgres
import Testing

@Suite struct PostgresErrorTests {
    @Test func aDuplicateKeyIsAUniqueViolationNamingItsConstraint() async throws {
        let pool = PostgresPool(try await testDatabase())
        try await pool.withConnection { connection in
            try connection.execute("CREATE TABLE records (bucket text, key text, CONSTRAINT records_once UNIQUE (bucket, key))")
            try connection.query("INSERT INTO records VALUES ($1, $2)", ["b", "k"])
        }
        let error = try await #require(throws: PostgresError.self) {
            try await pool.withConnection { try $0.query("INSERT INTO records VALUES ($1, $2)", ["b", "k"]) }
        }
        #expect(error.code == .uniqueViolation)
        #expect(error.sqlState == "23505")
        #expect(error.constraint == "records_once")
        #expect(error.detail?.contains("already exists") == true)
        #expect(!error.isRetryable)
    }

    @Test func otherIntegrityFailuresAreConstraintViolations() async throws {
        let pool = PostgresPool(try await testDatabase())
        let error = try await #require(throws: PostgresError.self) {
            try await pool.withConnection { connection in
                try connection.execute("CREATE TABLE t (name text NOT NULL)")
                try connection.query("INSERT INTO t VALUES ($1)", [nil])
            }
        }
        #expect(error.code == .constraintViolation)
        #expect(error.sqlState == "23502")
    }

    @Test func aSyntaxErrorKeepsItsSQLStateAndTheConnectionUsable() async throws {
        let pool = PostgresPool(try await testDatabase(), configuration: .init(maxConnections: 1))
        let error = try await #require(throws: PostgresError.self) {
            try await pool.withConnection { try $0.query("SELEC 1") }
        }
        #expect(error.code == .other)
        #expect(error.sqlState == "42601")
        let one = try await pool.withConnection { try $0.query("SELECT 1").first?.decode(0, as: Int.self) }
        #expect(one == 1)
    }

    @Test func aLongStatementIsCancelledByTheStatementTimeout() async throws {
        let settings = PostgresConnection.Settings(statementTimeout: .milliseconds(200))
        let pool = PostgresPool(try await testDatabase(), configuration: .init(maxConnections: 1, connection: settings))
        let started = ContinuousClock.now
        let error = try await #require(throws: PostgresError.self) {
            try await pool.withConnection { try $0.query("SELECT pg_sleep(20)") }
        }
        #expect(error.code == .statementTimeout)
        #expect(error.sqlState == "57014")
        #expect(ContinuousClock.now - started < .seconds(10))
        // Only the statement was cancelled: the same connection serves the next one.
        let (one, backend) = try await pool.withConnection { connection in
            (try connection.query("SELECT 1").first?.decode(0, as: Int.self), connection.isBroken)
        }
        #expect(one == 1)
        #expect(!backend)
        #expect(pool.openConnections == 1)
    }

    @Test func aLocalStatementTimeoutEndsWithItsTransaction() async throws {
        let pool = PostgresPool(try await testDatabase(), configuration: .init(maxConnections: 1))
        let (inside, after) = try await pool.withConnection { connection in
            let inside = try connection.transaction {
                try connection.setStatementTimeout(.milliseconds(1500), local: true)
                return try connection.query("SHOW statement_timeout").first?.decode(0, as: String.self)
            }
            return (inside, try connection.query("SHOW statement_timeout").first?.decode(0, as: String.self))
        }
        #expect(inside == "1500ms")
        #expect(after == "30s")
    }

    @Test(arguments: [
        ("08006", PostgresError.Code.connection), ("57P01", .connection), ("28P01", .authentication),
        ("23505", .uniqueViolation), ("23503", .constraintViolation), ("40001", .serializationFailure),
        ("40P01", .deadlock), ("57014", .statementTimeout), ("55P03", .lockNotAvailable), ("42P01", .other),
    ])
    func sqlStatesMapToTheirCodes(_ state: String, _ code: PostgresError.Code) {
        #expect(PostgresError.code(forSQLState: state) == code)
    }
}
