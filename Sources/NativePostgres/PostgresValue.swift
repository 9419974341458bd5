/// A query parameter (`$1`, `$2`, …).
///
/// Everything but bytes is sent untyped in PostgreSQL's text format, and the server gives each
/// parameter the type its place in the SQL calls for (`WHERE id = $1` takes the column's type,
/// `pg_terminate_backend($1)` an `int4`), as `psql` does for literals. Sending integers typed as
/// `int8` instead would break every call of a function taking `int4`: PostgreSQL does not cast
/// `int8` down to pick a function. Where the SQL gives no hint (`SELECT $1`) the type is
/// `text`: cast (`$1::int8`). A value that does not fit the inferred type is the server's error
/// (22003 for an `int4` out of range), never silently changed. Bytes are sent in binary format
/// as `bytea`, so they need no escaping.
public enum PostgresValue: Sendable, Hashable {
    /// SQL NULL.
    case null
    /// A 64-bit integer, in decimal.
    case integer(Int64)
    /// A double, as the shortest text that reads back to the same value.
    case double(Double)
    /// A boolean, as `t` or `f`.
    case bool(Bool)
    /// Text, sent untyped. Must not contain NUL characters (PostgreSQL text cannot hold them).
    case text(String)
    /// Bytes, sent as `bytea` in binary format.
    case bytes([UInt8])

    /// The PostgreSQL type the value is sent as (0: let the server infer it).
    var typeOID: UInt32 {
        isBinary ? PostgresType.bytea : PostgresType.unknown
    }

    /// The bytes sent to the server, nil for NULL; text format except for `.bytes`.
    var encoded: [UInt8]? {
        switch self {
        case .null: nil
        case .integer(let value): Array(String(value).utf8)
        // Swift's description is the shortest text that reads back to the same double, and
        // float8in accepts its "inf"/"-inf"/"nan" spellings.
        case .double(let value): Array(value.description.utf8)
        case .bool(let value): Array((value ? "t" : "f").utf8)
        case .text(let value): Array(value.utf8)
        case .bytes(let value): value
        }
    }

    /// Whether the value is sent in binary format.
    var isBinary: Bool {
        if case .bytes = self { true } else { false }
    }
}

extension PostgresValue: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    /// Creates `.integer` from a literal, so parameters read `[1, "a", nil]`.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// Creates `.text` from a literal.
    public init(stringLiteral value: String) { self = .text(value) }
    /// Creates `.double` from a literal.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// Creates `.bool` from a literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// Creates `.null` from `nil`.
    public init(nilLiteral: ()) { self = .null }
}

extension PostgresValue {
    /// `.integer`, or `.null` for nil.
    public init(_ value: Int64?) { self = value.map { .integer($0) } ?? .null }
    /// `.integer` of an `Int`, or `.null` for nil.
    public init(_ value: Int?) { self = value.map { .integer(Int64($0)) } ?? .null }
    /// `.text`, or `.null` for nil.
    public init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    /// `.bytes`, or `.null` for nil.
    public init(_ value: [UInt8]?) { self = value.map { .bytes($0) } ?? .null }
    /// `.bool`, or `.null` for nil.
    public init(_ value: Bool?) { self = value.map { .bool($0) } ?? .null }
}

/// The type OIDs this wrapper sends or checks (`pg_type.oid`, fixed since PostgreSQL 7).
enum PostgresType {
    static let unknown: UInt32 = 0
    static let bool: UInt32 = 16
    static let bytea: UInt32 = 17
    static let name: UInt32 = 19
    static let int8: UInt32 = 20
    static let int2: UInt32 = 21
    static let int4: UInt32 = 23
    static let text: UInt32 = 25
    static let oid: UInt32 = 26
    static let float4: UInt32 = 700
    static let float8: UInt32 = 701
    static let numeric: UInt32 = 1700
}
