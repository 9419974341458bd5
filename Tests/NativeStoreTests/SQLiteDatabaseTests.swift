import NativeStore
import Testing

@Suite struct SQLiteDatabaseTests {
    @Test func opensAndClosesAFile() throws {
        let file = TemporaryDatabase()
        defer { file.remove() }
        let db = try SQLiteDatabase(path: file.path)
        #expect(db.isOpen)
        try db.execute("CREATE TABLE t (x INTEGER)")
        db.close()
        #expect(!db.isOpen)
        #expect(throws: SQLiteError(code: SQLiteError.misuse)) { try db.execute("SELECT 1") }

        let reopened = try SQLiteDatabase(path: file.path)
        #expect(try reopened.query("SELECT count(*) FROM t") == [SQLiteRow(values: [0])])
    }

    @Test func opensInMemory() throws {
        let db = try SQLiteDatabase(path: ":memory:")
        #expect(try db.query("PRAGMA journal_mode").first?[0] == "memory")
    }

    @Test func appliesConfigurationPragmas() throws {
        let file = TemporaryDatabase()
        defer { file.remove() }
        let db = try SQLiteDatabase(path: file.path)
        #expect(try db.query("PRAGMA journal_mode").first?[0] == "wal")
        #expect(try db.query("PRAGMA synchronous").first?[0] == 2)  // FULL
        #expect(try db.query("PRAGMA foreign_keys").first?[0] == 1)
        #expect(try db.query("PRAGMA busy_timeout").first?[0] == 5000)

        let relaxed = try SQLiteDatabase(
            path: file.path,
            configuration: .init(busyTimeout: .milliseconds(250), synchronous: .normal)
        )
        #expect(try relaxed.query("PRAGMA synchronous").first?[0] == 1)  // NORMAL
        #expect(try relaxed.query("PRAGMA busy_timeout").first?[0] == 250)
    }

    @Test func failsToOpenAMissingDirectory() {
        #expect(throws: SQLiteError.self) {
            try SQLiteDatabase(path: "/nonexistent-\(UInt64.random(in: 0...UInt64.max))/db.sqlite")
        }
    }

    @Test func bindsAndReadsEveryValueType() throws {
        let db = try SQLiteDatabase(path: ":memory:")
        try db.execute("CREATE TABLE v (n, i, r, t, b)")
        let values: [SQLiteValue] = [
            .null, .integer(Int64.min), .real(-1.5e300), .text("héllo, 世界 🚀 \u{0}nul"), .blob([0, 1, 2, 255]),
        ]
        try db.run("INSERT INTO v VALUES (?, ?, ?, ?, ?)", values)
        let row = try #require(try db.query("SELECT n, i, r, t, b FROM v").first)
        #expect(row.values == values)
        #expect(try row.integer(1) == Int64.min)
        #expect(try row.real(2) == -1.5e300)
        #expect(try row.text(3) == "héllo, 世界 🚀 \u{0}nul")
        #expect(try row.blob(4) == [0, 1, 2, 255])
        #expect(throws: SQLiteError(code: SQLiteError.mismatch)) { try row.text(1) }
        #expect(throws: SQLiteError(code: SQLiteError.range)) { try row.text(9) }
    }

    @Test func emptyTextAndBlobAreNotNull() throws {
        let db = try SQLiteDatabase(path: ":memory:")
        let row = try #require(try db.query("SELECT ?, ?, typeof(?), typeof(?)", ["", .blob([]), "", .blob([])]).first)
        #expect(row.values == [.text(""), .blob([]), "text", "blob"])
    }

    @Test(arguments: [0, 1, 4096, 1 << 20])
    func roundTripsBlobs(size: Int) throws {
        let db = try SQLiteDatabase(path: ":memory:")
        try db.execute("CREATE TABLE b (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        try db.run("INSERT INTO b (data) VALUES (?)", [.blob(bytes)])
        let id = db.lastInsertRowID
        #expect(try db.query("SELECT data FROM b WHERE id = ?", [.integer(id)]).first?.blob(0) == bytes)
    }

    @Test func reportsExtendedConstraintCodes() throws {
        let db = try SQLiteDatabase(path: ":memory:")
        try db.execute("CREATE TABLE u (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
        try db.run("INSERT INTO u (id, name) VALUES (1, 'a')")
        #expect(db.lastInsertRowID == 1)
        #expect(db.changes == 1)

        let unique = #expect(throws: SQLiteError(code: SQLiteError.constraintUnique)) {
            try db.run("INSERT INTO u (name) VALUES ('a')")
        }
        #expect(unique?.isConstraintViolation == true)
        #expect(unique?.isUniqueViolation == true)
        #expect(unique?.message.contains("UNIQUE") == true)
        #expect(throws: SQLiteError(code: SQLiteError.constraintPrimaryKey)) {
            try db.run("INSERT INTO u (id, name) VALUES (1, 'b')")
        }
        #expect(throws: SQLiteError(code: SQLiteError.constraintNotNull)) {
            try db.run("INSERT INTO u (name) VALUES (NULL)")
        }
    }

    @Test func enforcesForeignKeys() throws {
        let db = try SQLiteDatabase(path: ":memory:")
        try db.execute("CREATE TABLE p (id INTEGER PRIMARY KEY); CREATE TABLE c (p INTEGER REFERENCES p(id))")
        #expect(throws: SQLiteError(code: SQLiteError.constraintForeignKey)) {
            try db.run("INSERT INTO c VALUES (42)")
        }
    }

    @Test func reportsSyntaxErrorsWithTheMessage() throws {
        let db = try SQLiteDatabase(path: ":memory:")
        let error = #expect(throws: SQLiteError(code: SQLiteError.error)) { try db.prepare("SELEKT 1") }
        #expect(error?.message.contains("syntax error") == true)
        #expect(throws: SQLiteError(code: SQLiteError.misuse)) { try db.prepare("  -- nothing") }
        #expect(throws: SQLiteError(code: SQLiteError.range)) { try db.query("SELECT ?", []) }
    }

    @Test func onConflictDoNothingReportsNoChange() throws {
        let db = try SQLiteDatabase(path: ":memory:")
        try db.execute("CREATE TABLE k (name TEXT PRIMARY KEY)")
        try db.run("INSERT INTO k VALUES ('a') ON CONFLICT DO NOTHING")
        #expect(db.changes == 1)
        try db.run("INSERT INTO k VALUES ('a') ON CONFLICT DO NOTHING")
        #expect(db.changes == 0)
    }
}
