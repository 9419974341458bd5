/// A Swift type a result column can be read as (``PostgresRow/decode(_:as:)``).
///
/// Results arrive in PostgreSQL's text format; each conforming type checks the column's type
/// first, so a `bytea` is never silently read as its `\x…` text and a `text` never parsed as a
/// number. `Optional` conforms when its wrapped type does and reads SQL NULL as nil; every other
/// type throws ``PostgresError/Code/typeMismatch`` for NULL.
public protocol PostgresDecodable: Sendable {
    /// Reads a non-NULL value from its text form `text`, sent as the type with OID `type`.
    ///
    /// - Returns: nil when the type or the text does not fit (the row turns that into an error).
    static func decode(text: ArraySlice<UInt8>, type: UInt32) -> Self?

    /// The value for SQL NULL, if the type has one.
    static var nullValue: Self? { get }
}

extension PostgresDecodable {
    /// Most types have no NULL.
    public static var nullValue: Self? { nil }
}

extension Int64: PostgresDecodable {
    /// Reads `int2`, `int4`, `int8` and `oid` columns.
    public static func decode(text: ArraySlice<UInt8>, type: UInt32) -> Int64? {
        guard [PostgresType.int2, PostgresType.int4, PostgresType.int8, PostgresType.oid].contains(type) else { return nil }
        return Int64(String(decoding: text, as: UTF8.self))
    }
}

extension Int: PostgresDecodable {
    /// Reads what `Int64` reads.
    public static func decode(text: ArraySlice<UInt8>, type: UInt32) -> Int? {
        Int64.decode(text: text, type: type).flatMap { Int(exactly: $0) }
    }
}

extension Double: PostgresDecodable {
    /// Reads `float4`, `float8`, `numeric` and the integer types.
    public static func decode(text: ArraySlice<UInt8>, type: UInt32) -> Double? {
        let numeric = [PostgresType.float4, PostgresType.float8, PostgresType.numeric]
        guard numeric.contains(type) || Int64.decode(text: text, type: type) != nil else { return nil }
        return Double(String(decoding: text, as: UTF8.self))
    }
}

extension Bool: PostgresDecodable {
    /// Reads `bool` columns (`t`/`f` in text format).
    public static func decode(text: ArraySlice<UInt8>, type: UInt32) -> Bool? {
        guard type == PostgresType.bool else { return nil }
        switch text.first {
        case UInt8(ascii: "t"): return true
        case UInt8(ascii: "f"): return false
        default: return nil
        }
    }
}

extension String: PostgresDecodable {
    /// Reads any column in its text form except `bytea` (use `[UInt8]`).
    public static func decode(text: ArraySlice<UInt8>, type: UInt32) -> String? {
        type == PostgresType.bytea ? nil : String(decoding: text, as: UTF8.self)
    }
}

extension Array: PostgresDecodable where Element == UInt8 {
    /// Reads `bytea` columns, whose text form is `\x` followed by hex digits (the connection sets
    /// `bytea_output = hex`, so a database configured for the old escape format still reads right).
    public static func decode(text: ArraySlice<UInt8>, type: UInt32) -> [UInt8]? {
        guard type == PostgresType.bytea, text.count % 2 == 0, text.starts(with: [UInt8(ascii: "\\"), UInt8(ascii: "x")])
        else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2 - 1)
        var index = text.startIndex + 2
        while index < text.endIndex {
            guard let high = hexValue(text[index]), let low = hexValue(text[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    /// Reads what `Wrapped` reads.
    public static func decode(text: ArraySlice<UInt8>, type: UInt32) -> Wrapped?? {
        Wrapped.decode(text: text, type: type).map { .some($0) }
    }

    /// NULL reads as nil.
    public static var nullValue: Wrapped?? { .some(nil) }
}
