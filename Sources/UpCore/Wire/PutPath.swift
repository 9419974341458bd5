/// `POST /put/<fsize>[/<name>/<value>]*` (raw body) and `POST /putb64/<fsize>[…]` (base64 body)
/// — single-request uploads (qiniu-protocol.md §4.5).
///
/// Same pair rules as ``MkfilePath`` (`key`, `fname`, `mimeType`, `x:…`, `x-qn-meta-…`, B64
/// values, any order, unknown names ignored, duplicates 400) plus `crc32/<decimal unsigned>`
/// (mismatch with the body is the caller's 406, §7.3).
public struct PutPath: Sendable, Equatable {
    /// `true` for `/putb64/` (body is base64 of the file), `false` for `/put/`.
    public var isBase64Body: Bool
    /// Declared size of the decoded file in bytes (`≥ 0`).
    public var fsize: Int64
    /// `key`; `nil` when absent.
    public var key: String?
    /// `fname`.
    public var fname: String?
    /// `mimeType`.
    public var mimeType: String?
    /// `crc32`: unsigned CRC-32 of the file, when the client sent one.
    public var crc32: UInt32?
    /// `x:<name>` custom variables in path order.
    public var customVariables: [(name: String, value: String)]
    /// `x-qn-meta-<name>` metadata in path order.
    public var metadata: [(name: String, value: String)]

    /// Creates a path value.
    public init(
        isBase64Body: Bool = false, fsize: Int64, key: String? = nil, fname: String? = nil, mimeType: String? = nil,
        crc32: UInt32? = nil, customVariables: [(name: String, value: String)] = [],
        metadata: [(name: String, value: String)] = []
    ) {
        self.isBase64Body = isBase64Body
        self.fsize = fsize
        self.key = key
        self.fname = fname
        self.mimeType = mimeType
        self.crc32 = crc32
        self.customVariables = customVariables
        self.metadata = metadata
    }

    /// Parses a request path as received (percent-decoding as for ``MkfilePath``).
    ///
    /// - Parameter path: The raw path starting `/put/` or `/putb64/`.
    /// - Returns: The parsed path.
    /// - Throws: ``UpError`` `.badRequest` (400), `detail` naming the field.
    public static func parse(_ path: some StringProtocol) throws(UpError) -> PutPath {
        let isBase64 = path.utf8.starts(with: "/putb64/".utf8)
        let segments = try WirePath.segments(path, after: isBase64 ? "/putb64/" : "/put/")
        let fsize = try WirePath.integer(segments[0], field: "fsize", in: 0...Int64.max)
        var fields = ObjectPathFields()
        var crc32: UInt32?
        try WirePath.pairs(segments.dropFirst()) { (name, value) throws(UpError) in
            guard try !fields.take(name: name, value: value), name == "crc32" else { return }
            guard crc32 == nil else { throw UpError(.badRequest, detail: "path parameter crc32 given twice") }
            crc32 = UInt32(try WirePath.integer(value, field: "crc32", in: 0...Int64(UInt32.max)))
        }
        return PutPath(
            isBase64Body: isBase64, fsize: fsize, key: fields.key, fname: fields.fname, mimeType: fields.mimeType,
            crc32: crc32, customVariables: fields.customVariables, metadata: fields.metadata)
    }

    /// The request path (SDK order, padded B64 values; `crc32` after the object fields).
    public var path: String {
        var out = (isBase64Body ? "/putb64/" : "/put/") + String(fsize) + fields.pathSuffix
        if let crc32 { out += "/crc32/\(crc32)" }
        return out
    }

    private var fields: ObjectPathFields {
        ObjectPathFields(
            key: key, fname: fname, mimeType: mimeType, customVariables: customVariables, metadata: metadata)
    }

    /// Field-wise equality.
    public static func == (lhs: PutPath, rhs: PutPath) -> Bool {
        lhs.isBase64Body == rhs.isBase64Body && lhs.fsize == rhs.fsize && lhs.crc32 == rhs.crc32
            && lhs.fields == rhs.fields
    }
}
