import NativeStore
import Testing

@Suite struct SQLiteMigrationTests {
    static let migrations = [
        "CREATE TABLE a (id INTEGER PRIMARY KEY)",
        "ALTER TABLE a ADD COLUMN name TEXT; CREATE INDEX a_name ON a(name)",
    ]

    @Test func runsEachMigrationOnce() throws {
        let file = TemporaryDatabase()
        defer { file.remove() }
        do {
            let db = try SQLiteDatabase(path: file.path)
            #expect(try db.userVersion() == 0)
            #expect(try db.migrate(Array(Self.migrations.prefix(1))) == 1)
            #expect(try db.userVersion() == 1)
        }
        let db = try SQLiteDatabase(path: file.path)
        #expect(try db.migrate(Self.migrations) == 1)  // only the new one
        #expect(try db.migrate(Self.migrations) == 0)
        #expect(try db.userVersion() == 2)
        try db.run("INSERT INTO a (name) VALUES ('x')")
    }

    @Test func aFailingMigrationLeavesTheSchemaUntouched() throws {
        let db = try SQLiteDatabase(path: ":memory:")
        #expect(throws: SQLiteError.self) {
            try db.migrate(Self.migrations + ["CREATE TABLE b (x); THIS IS NOT SQL"])
        }
        #expect(try db.userVersion() == 0)
        #expect(try db.query("SELECT name FROM sqlite_master WHERE type = 'table'").isEmpty)
    }

    @Test func refusesADatabaseNewerThanTheCode() throws {
        let db = try SQLiteDatabase(path: ":memory:")
        try db.migrate(Self.migrations)
        #expect(throws: SQLiteError(code: SQLiteError.error)) { try db.migrate(Array(Self.migrations.prefix(1))) }
    }
}
