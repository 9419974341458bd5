/// A value bound to a statement parameter or read from a result column: SQLite's five storage classes.
public enum SQLiteValue: Sendable, Hashable {
    /// SQL NULL.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An IEEE 754 double.
    case real(Double)
    /// UTF-8 text. Interior NUL characters are kept (the length is passed explicitly).
    case text(String)
    /// Bytes. An empty array is stored as a zero-length blob, not NULL.
    case blob([UInt8])

    /// The integer, or `nil` for any other storage class.
    public var integerValue: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }

    /// The double, or `nil` for any other storage class (integers are not converted).
    public var realValue: Double? {
        if case .real(let value) = self { value } else { nil }
    }

    /// The text, or `nil` for any other storage class.
    public var textValue: String? {
        if case .text(let value) = self { value } else { nil }
    }

    /// The bytes, or `nil` for any other storage class.
    public var blobValue: [UInt8]? {
        if case .blob(let value) = self { value } else { nil }
    }

    /// Whether this is SQL NULL.
    public var isNull: Bool { self == .null }
}

extension SQLiteValue: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByFloatLiteral,
    ExpressibleByNilLiteral
{
    /// Creates `.integer` from a literal, so bindings read `[1, "a"]`.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// Creates `.text` from a literal.
    public init(stringLiteral value: String) { self = .text(value) }
    /// Creates `.real` from a literal.
    public init(floatLiteral value: Double) { self = .real(value) }
    /// Creates `.null` from `nil`.
    public init(nilLiteral: ()) { self = .null }
}
