/// The header block of one multipart part (RFC 7578 §4.2, §4.4): the fields a form upload
/// needs, from `Content-Disposition: form-data; name="…"[; filename="…"]` and `Content-Type`.
///
/// Lines end in CRLF; a bare CR or LF is refused. Obsolete line folding (a line starting with a
/// space or tab continues the previous one) is unfolded. Header names are case-insensitive;
/// other headers are ignored; a repeated header: the last wins. Text must be UTF-8 (RFC 7578
/// §5.1 allows raw UTF-8 in names and file names).
struct PartHeaders: Sendable, Equatable {
    var name: String
    var filename: String?
    var contentType: String?

    /// - Parameter block: The bytes between the boundary line and the empty line (no final CRLF).
    /// - Throws: `.badRequest` with a `multipart:` detail.
    static func parse(_ block: [UInt8]) throws(UpError) -> PartHeaders {
        guard let text = String(validating: block, as: UTF8.self) else {
            throw MultipartFormParser.failure("part headers are not UTF-8")
        }
        var fields: [(name: String, value: [UInt8])] = []
        for line in text.utf8.split(separator: [0x0D, 0x0A], omittingEmptySubsequences: false) where !block.isEmpty {
            guard !line.contains(0x0D), !line.contains(0x0A) else {
                throw MultipartFormParser.failure("bare CR or LF in part headers")
            }
            if let first = line.first, first == 0x20 || first == 0x09 {
                guard !fields.isEmpty else {
                    throw MultipartFormParser.failure("part headers start with a continuation")
                }
                fields[fields.count - 1].value += [0x20] + Array(line)
                continue
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
                throw MultipartFormParser.failure("part header line without a name and colon")
            }
            fields.append((HeaderParameters.lowercased(line[..<colon]), Array(line[line.index(after: colon)...])))
        }
        guard let disposition = fields.last(where: { $0.name == "content-disposition" })?.value else {
            throw MultipartFormParser.failure("part without Content-Disposition")
        }
        guard let (type, parameters) = HeaderParameters.parse(disposition), type == "form-data" else {
            throw MultipartFormParser.failure("Content-Disposition is not form-data")
        }
        guard let name = parameters["name"] else {
            throw MultipartFormParser.failure("Content-Disposition without name")
        }
        let contentType = fields.last(where: { $0.name == "content-type" }).map {
            String(decoding: HeaderParameters.trimmed($0.value[...]), as: UTF8.self)
        }
        return PartHeaders(name: name, filename: parameters["filename"], contentType: contentType)
    }
}

/// `type *(";" attribute "=" (token | quoted-string))` — Content-Type and Content-Disposition.
enum HeaderParameters {
    /// Parses a header value into its lower-cased type and its parameters (names lower-cased;
    /// the last of a repeated name wins). In a quoted string, `\"` and `\\` are escapes and any
    /// other backslash is kept (browsers send Windows paths unescaped).
    ///
    /// - Returns: `nil` for an unterminated quoted string.
    static func parse(_ value: [UInt8]) -> (type: String, parameters: [String: String])? {
        var index = 0
        let count = value.count
        func readUntil(_ stops: Set<UInt8>) -> ArraySlice<UInt8> {
            let start = index
            while index < count && !stops.contains(value[index]) { index += 1 }
            return value[start..<index]
        }
        let type = lowercased(trimmed(readUntil([0x3B])))
        var parameters: [String: String] = [:]
        while index < count {
            index += 1  // the ";"
            let attribute = lowercased(trimmed(readUntil([0x3B, 0x3D])))
            guard index < count, value[index] == 0x3D else { continue }
            index += 1
            while index < count && (value[index] == 0x20 || value[index] == 0x09) { index += 1 }
            var parsed: [UInt8] = []
            if index < count && value[index] == 0x22 {
                index += 1
                var closed = false
                while index < count {
                    let byte = value[index]
                    if byte == 0x22 {
                        closed = true
                        index += 1
                        break
                    }
                    if byte == 0x5C, index + 1 < count, value[index + 1] == 0x22 || value[index + 1] == 0x5C {
                        parsed.append(value[index + 1])
                        index += 2
                    } else {
                        parsed.append(byte)
                        index += 1
                    }
                }
                guard closed else { return nil }
                _ = readUntil([0x3B])  // anything between the closing quote and ";" is dropped
            } else {
                parsed = Array(trimmed(readUntil([0x3B])))
            }
            if !attribute.isEmpty { parameters[attribute] = String(decoding: parsed, as: UTF8.self) }
        }
        return (type, parameters)
    }

    static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return [] }
        return bytes[first...last]
    }

    static func lowercased(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: bytes.map { (0x41...0x5A).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
    }
}
