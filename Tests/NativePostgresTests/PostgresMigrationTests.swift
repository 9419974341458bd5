import NativePostgres
import Testing

@Suite struct PostgresMigrationTests {
    /// Not idempotent on purpose: run twice, the CREATE TABLE fails and the INSERTs repeat. The
    /// sleep keeps the first instance inside its migrations while the second arrives.
    let migrations = [
        "CREATE TABLE applied (version int); CREATE TABLE items (id bigserial PRIMARY KEY, name text NOT NULL)",
        "SELECT pg_sleep(0.3); INSERT INTO applied VALUES (2)",
        "ALTER TABLE items ADD COLUMN note text; INSERT INTO applied VALUES (3)",
    ]

    @Test func twoInstancesMigratingTogetherApplyEachMigrationOnce() async throws {
        let database = try await testDatabase()
        let first = PostgresPool(database)
        let second = PostgresPool(database)
        async let a = first.migrate(migrations, table: "test_migrations")
        async let b = second.migrate(migrations, table: "test_migrations")
        let counts = try await [a, b].sorted()
        #expect(counts == [0, 3])
        let (applied, versions) = try await first.withConnection { connection in
            (
                try connection.query("SELECT version FROM applied ORDER BY version").rows.map { try $0.decode(0, as: Int.self) },
                try connection.query("SELECT version FROM test_migrations ORDER BY version").rows.map { try $0.decode(0, as: Int.self) }
            )
        }
        #expect(applied == [2, 3])
        #expect(versions == [1, 2, 3])
    }

    @Test func aLaterStartAppliesOnlyTheNewMigrations() async throws {
        let pool = PostgresPool(try await testDatabase())
        #expect(try await pool.migrate(Array(migrations.prefix(2))) == 2)
        #expect(try await pool.migrate(migrations) == 1)
        #expect(try await pool.migrate(migrations) == 0)
        // The migration session's statement timeout is back to the configured one afterwards.
        let timeout = try await pool.withConnection { try $0.query("SHOW statement_timeout").first?.decode(0, as: String.self) }
        #expect(timeout == "30s")
    }

    @Test func aFailingMigrationLeavesTheSchemaAtTheVersionBeforeIt() async throws {
        let pool = PostgresPool(try await testDatabase())
        let broken = migrations.prefix(2) + ["ALTER TABLE items ADD COLUMN note text; INSERT INTO nowhere VALUES (1)"]
        await #expect(throws: PostgresError.self) { try await pool.migrate(Array(broken)) }
        let (versions, columns) = try await pool.withConnection { connection in
            (
                try connection.query("SELECT max(version) FROM schema_migrations").first?.decode(0, as: Int.self),
                try connection.query(
                    "SELECT count(*) FROM information_schema.columns WHERE table_name = 'items' AND column_name = 'note'"
                ).first?.decode(0, as: Int.self)
            )
        }
        #expect(versions == 2)
        #expect(columns == 0)
        // The lock was released: the fixed list applies.
        #expect(try await pool.migrate(migrations) == 1)
    }

    @Test func aDatabaseNewerThanTheProgramIsRefused() async throws {
        let pool = PostgresPool(try await testDatabase())
        try await pool.migrate(migrations)
        let error = await #expect(throws: PostgresError.self) { try await pool.migrate(Array(migrations.prefix(1))) }
        #expect(error?.code == .configuration)
        #expect(error?.message.contains("version 3") == true)
    }

    @Test func theMigrationTableMustBeAPlainIdentifier() async throws {
        let pool = PostgresPool(try await testDatabase())
        let error = await #expect(throws: PostgresError.self) { try await pool.migrate(migrations, table: "x; DROP TABLE y") }
        #expect(error?.code == .configuration)
    }
}
