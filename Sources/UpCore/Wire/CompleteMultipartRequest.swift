/// The v2 complete body (qiniu-protocol.md §5):
/// `{"parts":[{"etag","partNumber"}…],"fname","mimeType","customVars","metadata"}`.
///
/// The Python SDK sends all five keys with `null` for unset ones; go-sdk omits empty ones — both
/// are accepted. Lenient where clients differ, strict where the object depends on it:
///
/// * `parts`: required, non-empty, each `{"etag": non-empty string, "partNumber": 1…10000}`,
///   strictly ascending (gaps allowed); other members of a part are ignored.
/// * `fname`, `mimeType`: string or `null`.
/// * `customVars`: object or `null`; only `x:`-prefixed names are kept (§6: the SDK passes the
///   caller's dict unfiltered). Values: strings as is; numbers and booleans as their JSON text
///   (a Python caller may pass `{"x:n": 1}`); `null` skips the member; arrays/objects are a 400.
/// * `metadata`: the same, for `x-qn-meta-`-prefixed names.
/// * Unknown top-level members are ignored; a repeated member (top level or inside
///   `customVars` / `metadata`) counts once: the last, as ``JSONValue/subscript(_:)`` reads it.
public struct CompleteMultipartRequest: Sendable, Equatable {
    /// One `{"etag","partNumber"}` entry.
    public struct Part: Sendable, Hashable {
        /// The etag the upload-part reply gave.
        public var etag: String
        /// 1…10000.
        public var partNumber: Int

        /// Creates an entry.
        public init(etag: String, partNumber: Int) {
            self.etag = etag
            self.partNumber = partNumber
        }
    }

    /// The parts, strictly ascending by ``Part/partNumber``.
    public var parts: [Part]
    /// `fname`, for `$(fname)`.
    public var fname: String?
    /// `mimeType`: the client's MIME type (§1.3 `detectMime`).
    public var mimeType: String?
    /// `x:` custom variables, in document order.
    public var customVariables: [(name: String, value: String)]
    /// `x-qn-meta-` metadata, in document order.
    public var metadata: [(name: String, value: String)]

    /// Creates a request value.
    public init(
        parts: [Part], fname: String? = nil, mimeType: String? = nil,
        customVariables: [(name: String, value: String)] = [], metadata: [(name: String, value: String)] = []
    ) {
        self.parts = parts
        self.fname = fname
        self.mimeType = mimeType
        self.customVariables = customVariables
        self.metadata = metadata
    }

    /// Parses and validates a complete body.
    ///
    /// - Parameter body: The raw JSON bytes.
    /// - Returns: The request.
    /// - Throws: ``UpError`` `.invalidJSON` (400) for text that is not JSON or has the wrong
    ///   shape; `.badRequest` (400) for an empty list, a part number outside 1…10000 or out of
    ///   order. `detail` names the member.
    public static func parse(_ body: some Collection<UInt8>) throws(UpError) -> CompleteMultipartRequest {
        let json = try JSONValue.parse(body)
        guard case .object = json else { throw UpError(.invalidJSON, detail: "complete body is not an object") }
        guard case .array(let items)? = json["parts"] else {
            throw UpError(.invalidJSON, detail: "parts is missing or not an array")
        }
        guard !items.isEmpty else { throw UpError(.badRequest, detail: "parts is empty") }
        var parts: [Part] = []
        parts.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            guard let etag = item["etag"]?.stringValue, !etag.isEmpty else {
                throw UpError(.invalidJSON, detail: "parts[\(index)].etag is missing or not a non-empty string")
            }
            guard let number = item["partNumber"]?.int64Value else {
                throw UpError(.invalidJSON, detail: "parts[\(index)].partNumber is missing or not an integer")
            }
            guard (1...Int64(MultipartPath.maxPartNumber)).contains(number) else {
                throw UpError(.badRequest, detail: "parts[\(index)].partNumber \(number) outside 1...10000")
            }
            if let previous = parts.last, Int(number) <= previous.partNumber {
                throw UpError(
                    .badRequest, detail: "parts[\(index)].partNumber \(number) not above \(previous.partNumber)")
            }
            parts.append(Part(etag: etag, partNumber: Int(number)))
        }
        return CompleteMultipartRequest(
            parts: parts, fname: try optionalString(json, "fname"), mimeType: try optionalString(json, "mimeType"),
            customVariables: try pairs(json, "customVars", prefix: "x:"),
            metadata: try pairs(json, "metadata", prefix: "x-qn-meta-"))
    }

    /// The JSON text a client sends: all five members, `null` for unset ones (as Python does).
    public func serialized() -> String {
        let partValues = parts.map {
            JSONValue.object([("etag", .string($0.etag)), ("partNumber", .int(Int64($0.partNumber)))])
        }
        let object: (_ pairs: [(name: String, value: String)]) -> JSONValue = { pairs in
            pairs.isEmpty ? .null : .object(pairs.map { ($0.name, .string($0.value)) })
        }
        return JSONValue.object([
            ("parts", .array(partValues)), ("fname", fname.map(JSONValue.string) ?? .null),
            ("mimeType", mimeType.map(JSONValue.string) ?? .null), ("customVars", object(customVariables)),
            ("metadata", object(metadata)),
        ]).serialized()
    }

    /// Field-wise equality.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.parts == rhs.parts && lhs.fname == rhs.fname && lhs.mimeType == rhs.mimeType
            && WirePath.equal(lhs.customVariables, rhs.customVariables) && WirePath.equal(lhs.metadata, rhs.metadata)
    }

    private static func optionalString(_ json: JSONValue, _ name: String) throws(UpError) -> String? {
        switch json[name] {
        case nil, .null?: return nil
        case .string(let value)?:
            try ProtocolText.check(value, field: name)
            return value
        default: throw UpError(.invalidJSON, detail: "\(name) is not a string")
        }
    }

    private static func pairs(
        _ json: JSONValue, _ name: String, prefix: String
    ) throws(UpError) -> [(name: String, value: String)] {
        let members: [(key: String, value: JSONValue)]
        switch json[name] {
        case nil, .null?: return []
        case .object(let list)?: members = list
        default: throw UpError(.invalidJSON, detail: "\(name) is not an object")
        }
        var result: [(name: String, value: String)] = []
        for (key, value) in members where key.utf8.count > prefix.utf8.count && key.utf8.starts(with: prefix.utf8) {
            let text: String
            switch value {
            case .null: continue
            case .string(let string): text = string
            case .int, .double, .bool: text = value.serialized()
            case .array, .object: throw UpError(.invalidJSON, detail: "\(name).\(key) is not a scalar")
            }
            try ProtocolText.check(key, field: name)
            try ProtocolText.check(text, field: key)
            // A repeated name: the last wins, as for top-level members.
            result.removeAll { $0.name == key }
            result.append((key, text))
        }
        return result
    }
}
