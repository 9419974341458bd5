/// A strict RFC 8259 parser producing ``JSONValue``: keeps member order and the int/double split.
struct JSONParser {
    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0
    /// Deeper nesting is refused: policies and callback replies are shallow, and recursion
    /// depth must stay bounded for untrusted input.
    private static let maxDepth = 256

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Parses one complete document (surrounding whitespace allowed, nothing after it).
    mutating func parseDocument() throws(JSONValue.SyntaxError) -> JSONValue {
        // A UTF-8 BOM is not JSON (RFC 8259 §8.1 allows ignoring it; we refuse, as Go does).
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw failure("trailing characters") }
        return value
    }

    private func failure(_ what: String) -> JSONValue.SyntaxError {
        JSONValue.SyntaxError(reason: what, offset: index)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(JSONValue.SyntaxError) -> JSONValue {
        guard index < bytes.count else { throw failure("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw failure("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONValue.SyntaxError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw failure("bad literal") }
        var offset = 0
        for expected in String(describing: literal).utf8 {
            guard bytes[index + offset] == expected else { throw failure("bad literal") }
            offset += 1
        }
        index += count
    }

    private mutating func enter() throws(JSONValue.SyntaxError) {
        depth += 1
        guard depth <= Self.maxDepth else { throw failure("nesting too deep") }
    }

    private mutating func parseObject() throws(JSONValue.SyntaxError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected member name") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhitespace()
            members.append((key, try parseValue()))
            skipWhitespace()
            guard index < bytes.count else { throw failure("unterminated object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            } else {
                throw failure("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray() throws(JSONValue.SyntaxError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw failure("unterminated array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            } else {
                throw failure("expected ',' or ']'")
            }
        }
    }

    private mutating func parseNumber() throws(JSONValue.SyntaxError) -> JSONValue {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw failure("bad number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if isDigit(bytes[index]) {
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        } else {
            throw failure("bad number")
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("bad fraction") }
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            isInteger = false
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("bad exponent") }
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        }
        if isInteger, let value = integer(start..<index) { return .int(value) }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw failure("number out of range") }
        return .double(value)
    }

    /// The integer written at `range` (an optional `-`, then digits, as `parseNumber` checked),
    /// read digit by digit with no `String`; nil when it does not fit in `Int64`.
    private func integer(_ range: Range<Int>) -> Int64? {
        var position = range.lowerBound
        let negative = bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        var value: Int64 = 0
        while position < range.upperBound {
            let digit = Int64(bytes[position] &- UInt8(ascii: "0"))
            let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (next, carried) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            if overflowed || carried { return nil }
            value = next
            position += 1
        }
        return value
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func parseString() throws(JSONValue.SyntaxError) -> String {
        index += 1
        // Most strings (names, keys, ids) have no escape: validated and copied straight from
        // the input, with no buffer in between. Anything else is read again below.
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return try text(bytes.span.extracting(start..<index - 1))
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            index += 1
        }
        index = start
        var output = [UInt8]()
        while true {
            guard index < bytes.count else { throw failure("unterminated string") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return try text(output.span)
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw failure("unterminated escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): output.append(0x22)
                case UInt8(ascii: "\\"): output.append(0x5C)
                case UInt8(ascii: "/"): output.append(0x2F)
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "u"): output.append(contentsOf: try parseUnicodeEscape())
                default: throw failure("bad escape")
                }
            case 0x00..<0x20:
                throw failure("control character in string")
            default:
                // Copy the run of plain bytes up to the next quote, backslash or control byte at once.
                let start = index
                index += 1
                while index < bytes.count {
                    let next = bytes[index]
                    if next == UInt8(ascii: "\"") || next == UInt8(ascii: "\\") || next < 0x20 { break }
                    index += 1
                }
                output.append(contentsOf: bytes[start..<index])
            }
        }
    }

    /// `utf8` as a String, or the "invalid UTF-8" error (`UTF8Span`'s check: about half the
    /// instructions of `String(validating:as:)`, which a token request pays on every member).
    private func text(_ utf8: Span<UInt8>) throws(JSONValue.SyntaxError) -> String {
        do {
            return String(copying: try UTF8Span(validating: utf8))
        } catch {
            throw failure("invalid UTF-8")
        }
    }

    /// Reads `XXXX` (after `\u`), joining a surrogate pair; returns the scalar's UTF-8 bytes.
    private mutating func parseUnicodeEscape() throws(JSONValue.SyntaxError) -> [UInt8] {
        let first = try readHex4()
        var value = first
        if (0xD800..<0xDC00).contains(first) {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw failure("lone surrogate") }
            index += 2
            let second = try readHex4()
            guard (0xDC00..<0xE000).contains(second) else { throw failure("bad surrogate pair") }
            value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
        } else if (0xDC00..<0xE000).contains(first) {
            throw failure("lone surrogate")
        }
        guard let scalar = Unicode.Scalar(value) else { throw failure("bad scalar") }
        return Array(String(Character(scalar)).utf8)
    }

    private mutating func readHex4() throws(JSONValue.SyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw failure("bad hex digit")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}

extension JSONValue {
    /// Where and why a text is not JSON.
    public struct SyntaxError: Error, Equatable, Sendable, CustomStringConvertible {
        /// What was wrong, e.g. `expected ',' or '}'`.
        public var reason: String
        /// The byte offset (0-based) at which it was noticed.
        public var offset: Int

        /// `<reason> at byte <offset>`.
        public var description: String { "\(reason) at byte \(offset)" }
    }

    /// Parses a complete JSON document like ``parse(_:)-(Collection<UInt8>)``, telling where the
    /// text stops being JSON (configuration files report it as line and column).
    ///
    /// - Throws: ``SyntaxError``.
    public static func parseDocument(_ bytes: some Collection<UInt8>) throws(SyntaxError) -> JSONValue {
        var parser = JSONParser(Array(bytes))
        return try parser.parseDocument()
    }

    /// Parses a complete JSON document (any value at top level).
    ///
    /// Strict RFC 8259: no comments, no trailing commas, no NaN, strings must be valid UTF-8
    /// (lone surrogate escapes refused). Integers that fit `Int64` become ``int(_:)``.
    ///
    /// - Parameter bytes: UTF-8 JSON text.
    /// - Returns: The value.
    /// - Throws: ``UpError`` `.invalidJSON`, with the byte offset in `detail`.
    public static func parse(_ bytes: some Collection<UInt8>) throws(UpError) -> JSONValue {
        do {
            return try parseDocument(bytes)
        } catch {
            throw UpError(.invalidJSON, detail: error.description)
        }
    }

    /// Parses JSON text; see ``parse(_:)-(Collection<UInt8>)``.
    ///
    /// - Parameter text: JSON text.
    /// - Returns: The value.
    /// - Throws: ``UpError`` `.invalidJSON`.
    public static func parse(_ text: String) throws(UpError) -> JSONValue {
        try parse(Array(text.utf8))
    }
}
