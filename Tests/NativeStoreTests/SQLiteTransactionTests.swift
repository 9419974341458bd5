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
