import NativeStore
import Testing

@Suite struct SQLiteStatementTests {
    @Test func reusesCachedStatements() throws {
        let db = try SQLiteDatabase(path: ":memory:")
        #expect(db.cachedStatementCount == 0)
        let sql = "SELECT ? + 1"
        let first = try db.withStatement(sql) { ObjectIdentifier($0) }
        let second = try db.withStatement(sql) { ObjectIdentifier($0) }
        #expect(first == second)
        #expect(db.cachedStatementCount == 1)
        // Bindings were cleared and the statement reset between uses.
        #expect(try db.query(sql, [1]) == [SQLiteRow(values: [2])])
        #expect(try db.query(sql, [41]) == [SQLiteRow(values: [42])])
        #expect(db.cachedStatementCount == 1)
    }

    @Test func nestedUseOfTheSameSQLGetsItsOwnStatement() throws {
        let db = try SQLiteDatabase(path: ":memory:")
        let sql = "SELECT value FROM json_each('[1,2,3]')"
        let pairs = try db.withStatement(sql) { outer in
            var pairs: [Int64] = []
            while try outer.step() {
                let inner = try db.query(sql).count
                pairs.append(outer.column(0).integerValue! * Int64(inner))
            }
            return pairs
        }
        #expect(pairs == [3, 6, 9])
    }

    @Test func cacheIsCapped() throws {
        let db = try SQLiteDatabase(path: ":memory:", configuration: .init(statementCacheCapacity: 4))
        for i in 0..<10 {
            _ = try db.query("SELECT \(i)")
        }
        #expect(db.cachedStatementCount <= 4)
    }

    @Test func stepsRowsAndNamesColumns() throws {
        let db = try SQLiteDatabase(path: ":memory:")
        let statement = try db.prepare("SELECT value AS v, value * 2 AS w FROM json_each(?) ORDER BY value")
        #expect(statement.parameterCount == 1)
        #expect(statement.columnCount == 2)
        #expect(statement.columnName(1) == "w")
        try statement.bind(.text("[3,1,2]"), at: 1)
        #expect(try statement.rows().map(\.values) == [[1, 2], [2, 4], [3, 6]])
        statement.reset()
        #expect(try statement.step())
        #expect(statement.currentRow() == SQLiteRow(values: [1, 2]))
        // Binding mid-step is misuse; after a reset, an index past the last parameter is a range error.
        #expect(throws: SQLiteError(code: SQLiteError.misuse)) { try statement.bind(.null, at: 1) }
        statement.reset()
        #expect(throws: SQLiteError(code: SQLiteError.range)) { try statement.bind(.null, at: 2) }
    }
}
