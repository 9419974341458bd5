/// Everything one statement returned.
public struct PostgresResult: Sendable {
    /// The result's columns (empty for a command without rows).
    public let columns: [PostgresColumn]
    /// The rows, in the order the server sent them.
    public let rows: [PostgresRow]
    /// Rows inserted, updated, deleted, selected, … (`PQcmdTuples`); 0 when the command reports none.
    /// An `INSERT … ON CONFLICT DO NOTHING` that met the conflict reports 0.
    public let rowsAffected: Int
    /// The command tag (`PQcmdStatus`), e.g. `"INSERT 0 1"`, `"UPDATE 3"`, `"COMMIT"`.
    public let commandTag: String

    /// The first row, if any.
    public var first: PostgresRow? { rows.first }
}
