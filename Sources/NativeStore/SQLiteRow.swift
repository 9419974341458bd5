/// One result row, copied out of SQLite so it stays valid after the statement steps on.
public struct SQLiteRow: Sendable, Hashable {
    /// The column values, in select-list order.
    public var values: [SQLiteValue]

    /// Creates a row from column values.
    public init(values: [SQLiteValue]) { self.values = values }

    /// The value of column `index` (0-based, as in the select list).
    public subscript(index: Int) -> SQLiteValue { values[index] }

    /// Column `index` as an integer.
    ///
    /// - Throws: `SQLiteError` with code `SQLiteError.mismatch` if the column is not an integer.
    public func integer(_ index: Int) throws -> Int64 {
        guard let value = try column(index).integerValue else { throw mismatch(index, "integer") }
        return value
    }

    /// Column `index` as a double; integers are widened, as SQLite itself does for REAL columns.
    ///
    /// - Throws: `SQLiteError` with code `SQLiteError.mismatch` if the column is neither real nor integer.
    public func real(_ index: Int) throws -> Double {
        switch try column(index) {
        case .real(let value): return value
        case .integer(let value): return Double(value)
        default: throw mismatch(index, "real")
        }
    }

    /// Column `index` as text.
    ///
    /// - Throws: `SQLiteError` with code `SQLiteError.mismatch` if the column is not text.
    public func text(_ index: Int) throws -> String {
        guard let value = try column(index).textValue else { throw mismatch(index, "text") }
        return value
    }

    /// Column `index` as bytes.
    ///
    /// - Throws: `SQLiteError` with code `SQLiteError.mismatch` if the column is not a blob.
    public func blob(_ index: Int) throws -> [UInt8] {
        guard let value = try column(index).blobValue else { throw mismatch(index, "blob") }
        return value
    }

    private func column(_ index: Int) throws -> SQLiteValue {
        guard values.indices.contains(index) else {
            throw SQLiteError(code: SQLiteError.range, message: "column \(index) out of range 0..<\(values.count)")
        }
        return values[index]
    }

    private func mismatch(_ index: Int, _ expected: String) -> SQLiteError {
        SQLiteError(code: SQLiteError.mismatch, message: "column \(index) is \(values[index]), expected \(expected)")
    }
}
