/// One result row, copied out of libpq so it outlives the result it came from.
///
/// ```swift
/// let id = try row.decode(0, as: Int64.self)
/// let note = try row.decode("note", as: String?.self)   // nil for NULL
/// ```
public struct PostgresRow: Sendable {
    /// The result's columns, shared by all its rows.
    public let columns: [PostgresColumn]
    /// Each column's value in text format, nil for NULL.
    let cells: [[UInt8]?]

    init(columns: [PostgresColumn], cells: [[UInt8]?]) {
        self.columns = columns
        self.cells = cells
    }

    /// Number of columns.
    public var count: Int { cells.count }

    /// Whether column `index` is NULL (false for an index out of range).
    public func isNull(_ index: Int) -> Bool { cells.indices.contains(index) && cells[index] == nil }

    /// Column `index` (0-based, as in the select list) read as `T`.
    ///
    /// - Throws: ``PostgresError/Code/typeMismatch`` when the index is out of range, the column is
    ///   NULL and `T` is not optional, or the column's type or text does not fit `T`.
    public func decode<T: PostgresDecodable>(_ index: Int, as type: T.Type = T.self) throws -> T {
        guard cells.indices.contains(index) else {
            throw PostgresError(.typeMismatch, message: "column \(index) out of range 0..<\(cells.count)")
        }
        guard let text = cells[index] else {
            guard let null = T.nullValue else {
                throw PostgresError(.typeMismatch, message: "column \(columns[index].name) is NULL, expected \(T.self)")
            }
            return null
        }
        guard let value = T.decode(text: text[...], type: columns[index].type) else {
            throw PostgresError(
                .typeMismatch, message: "column \(columns[index].name) (type \(columns[index].type)) is not a \(T.self)")
        }
        return value
    }

    /// The column named `name` read as `T`; the first one if several share the name.
    ///
    /// - Throws: ``PostgresError/Code/typeMismatch`` when there is no such column, or as ``decode(_:as:)``.
    public func decode<T: PostgresDecodable>(_ name: String, as type: T.Type = T.self) throws -> T {
        guard let index = columns.firstIndex(where: { $0.name == name }) else {
            throw PostgresError(.typeMismatch, message: "no column \(name) in \(columns.map(\.name))")
        }
        return try decode(index, as: type)
    }
}

/// A result column: its name in the select list and its type's OID (`pg_type.oid`).
public struct PostgresColumn: Sendable, Hashable {
    /// The column's name (`PQfname`).
    public var name: String
    /// The OID of its type (`PQftype`): 20 for `int8`, 25 for `text`, 17 for `bytea`, …
    public var type: UInt32
}
