import NativeStore
import Testing

@Suite struct SQLiteTransactionTests {
    struct Boom: Error {}

    private func database() throws -> SQLiteDatabase {
        let db = try SQLiteDatabase(path: ":memory:")
        try db.execute("CREATE TABLE t (x INTEGER NOT NULL)")
        return db
    }

    private func count(_ db: SQLiteDatabase) throws -> Int64 {
        try db.query("SELECT count(*) FROM t")[0].integer(0)
    }

    @Test func commitsWhenTheBodyReturns() throws {
        let db = try database()
        let value = try db.transaction {
            #expect(db.isInTransaction)
            try db.run("INSERT INTO t VALUES (1)")
            return 7
        }
        #expect(value == 7)
        #expect(!db.isInTransaction)
        #expect(try count(db) == 1)
    }

    @Test func rollsBackWhenTheBodyThrows() throws {
        let db = try database()
        #expect(throws: Boom.self) {
            try db.transaction {
                try db.run("INSERT INTO t VALUES (1)")
                throw Boom()
            }
        }
        #expect(!db.isInTransaction)
        #expect(try count(db) == 0)
    }

    @Test func rollsBackWhenAStatementFails() throws {
        let db = try database()
        #expect(throws: SQLiteError(code: SQLiteError.constraintNotNull)) {
            try db.transaction {
                try db.run("INSERT INTO t VALUES (1)")
                try db.run("INSERT INTO t VALUES (NULL)")
            }
        }
        #expect(try count(db) == 0)
    }

    @Test func nestedFailureUndoesOnlyTheInnerWork() throws {
        let db = try database()
        try db.transaction {
            try db.run("INSERT INTO t VALUES (1)")
            #expect(throws: Boom.self) {
                try db.transaction {
                    try db.run("INSERT INTO t VALUES (2)")
                    throw Boom()
                }
            }
            try db.transaction { try db.run("INSERT INTO t VALUES (3)") }
        }
        #expect(try db.query("SELECT x FROM t ORDER BY x").map { try $0.integer(0) } == [1, 3])
    }

    @Test func seesOtherConnectionsCommitsInWALMode() throws {
        let file = TemporaryDatabase()
        defer { file.remove() }
        let writer = try SQLiteDatabase(path: file.path)
        let reader = try SQLiteDatabase(path: file.path)
        try writer.execute("CREATE TABLE t (x INTEGER)")
        try writer.transaction { try writer.run("INSERT INTO t VALUES (1)") }
        #expect(try reader.query("SELECT x FROM t") == [SQLiteRow(values: [1])])
    }
}

/// A full disk inside a transaction (issue 5, disk-full suite): SQLITE_FULL must roll the whole
/// transaction back and leave a sound database that takes the same change once there is room.
/// `max_page_count` gives a real SQLITE_FULL without filling a real disk.
@Suite struct SQLiteFullTests {
    @Test func aFullDatabaseRollsTheTransactionBackAndTakesTheChangeOnceThereIsRoom() throws {
        let file = TemporaryDatabase()
        defer { file.remove() }
        let db = try SQLiteDatabase(path: file.path)
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, payload BLOB NOT NULL)")
        try db.run("INSERT INTO t (payload) VALUES (?)", [.blob([1, 2, 3])])
        let pages = try db.query("PRAGMA page_count")[0].integer(0)
        try db.execute("PRAGMA max_page_count = \(pages + 2)")

        let payload = [UInt8](repeating: 0xA5, count: 64 * 1024)  // 16 pages: cannot fit
        var caught: SQLiteError?
        do {
            try db.transaction {
                try db.run("INSERT INTO t (payload) VALUES (?)", [.blob([4])])
                try db.run("INSERT INTO t (payload) VALUES (?)", [.blob(payload)])
            }
        } catch let error as SQLiteError {
            caught = error
        }
        #expect(caught?.primaryCode == SQLiteError.full)
        #expect(caught?.isFull == true)
        #expect(!db.isInTransaction)
        // Nothing of the failed transaction, everything from before, and a sound file.
        #expect(try db.query("SELECT count(*) FROM t")[0].integer(0) == 1)
        #expect(try db.query("PRAGMA integrity_check")[0].text(0) == "ok")

        try db.execute("PRAGMA max_page_count = 1000000")
        try db.transaction {
            try db.run("INSERT INTO t (payload) VALUES (?)", [.blob([4])])
            try db.run("INSERT INTO t (payload) VALUES (?)", [.blob(payload)])
        }
        #expect(try db.query("SELECT count(*) FROM t")[0].integer(0) == 3)
    }

    @Test func anIOErrorIsFullOnlyWhenTheDiskWasOutOfSpace() {
        #expect(SQLiteError(code: SQLiteError.full).isFull)
        // SQLITE_IOERR_FSYNC (1034) / SQLITE_IOERR_SHMSIZE (4874) with errno ENOSPC (28), EDQUOT (122).
        #expect(SQLiteError(code: 1034, systemErrno: 28).isFull)
        #expect(SQLiteError(code: 4874, systemErrno: 122).isFull)
        #expect(!SQLiteError(code: 1034, systemErrno: 5).isFull)  // EIO: a broken disk, not a full one
        #expect(!SQLiteError(code: SQLiteError.constraintUnique, systemErrno: 28).isFull)
    }
}
