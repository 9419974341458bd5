/// `POST /mkfile/<fsize>[/<name>/<B64 value>]*` — assemble a v1 upload (qiniu-protocol.md §4.3).
///
/// Pairs come in any order (Python: mimeType, key, fname, x:…, x-qn-meta-…; go-sdk: mimeType,
/// key, x:…) and are read positionally, so an empty value is an empty segment
/// (`/x:empty//next`). Recognized names: `key`, `fname`, `mimeType`, `x:<name>`,
/// `x-qn-meta-<name>`; values are B64 (padding optional) of UTF-8 text. Unknown names (and a bare
/// `x:` / `x-qn-meta-`) are ignored. A recognized name given twice (also `x:a` and `x%3Aa`) is a
/// `400`: two readers of one URL must never disagree on the key or a variable, and no SDK
/// repeats a name.
///
/// Percent-decoding: the raw path (as received; a `?query` is ignored) is split on `/` first,
/// then each segment is percent-decoded on its own (`+` kept) — so `%2F` never splits a segment,
/// empty segments keep their place, and `x%3Aname` / `%3D` padding equal `x:name` / `=`.
///
/// ```swift
/// let mkfile = try MkfilePath.parse("/mkfile/5/key/aGVsbG8udHh0/x:a/QQ==")
/// // mkfile.key == "hello.txt", mkfile.customVariables == [("x:a", "A")]
/// ```
public struct MkfilePath: Sendable, Equatable {
    /// Declared object size in bytes (`≥ 0`); the server checks it against the blocks.
    public var fsize: Int64
    /// `key`: the client's key wish; `nil` when absent, `""` when sent empty (§1.3 nuances).
    public var key: String?
    /// `fname`: original file name, for `$(fname)` (§2).
    public var fname: String?
    /// `mimeType`: the client's MIME type (§1.3 `detectMime`).
    public var mimeType: String?
    /// `x:<name>` custom variables in path order, names with their `x:` prefix (§2).
    public var customVariables: [(name: String, value: String)]
    /// `x-qn-meta-<name>` metadata in path order, full names (§2).
    public var metadata: [(name: String, value: String)]

    /// Creates a path value (the client side builds URLs from it with ``path``).
    public init(
        fsize: Int64, key: String? = nil, fname: String? = nil, mimeType: String? = nil,
        customVariables: [(name: String, value: String)] = [], metadata: [(name: String, value: String)] = []
    ) {
        self.fsize = fsize
        self.key = key
        self.fname = fname
        self.mimeType = mimeType
        self.customVariables = customVariables
        self.metadata = metadata
    }

    /// Parses a request path as received.
    ///
    /// - Parameter path: The raw path (percent-encoded; a `?query` is ignored).
    /// - Returns: The parsed path.
    /// - Throws: ``UpError`` `.badRequest` (400): bad `fsize`, a name without a value, a
    ///   duplicate, or a value that is not B64 UTF-8 — `detail` names the field.
    public static func parse(_ path: some StringProtocol) throws(UpError) -> MkfilePath {
        let segments = try WirePath.segments(path, after: "/mkfile/")
        let fsize = try WirePath.integer(segments[0], field: "fsize", in: 0...Int64.max)
        var fields = ObjectPathFields()
        try WirePath.pairs(segments.dropFirst()) { (name, value) throws(UpError) in
            _ = try fields.take(name: name, value: value)
        }
        return MkfilePath(
            fsize: fsize, key: fields.key, fname: fields.fname, mimeType: fields.mimeType,
            customVariables: fields.customVariables, metadata: fields.metadata)
    }

    /// The request path, in the Python SDK's order with padded B64 values (§10.6).
    public var path: String {
        "/mkfile/\(fsize)" + fields.pathSuffix
    }

    private var fields: ObjectPathFields {
        ObjectPathFields(
            key: key, fname: fname, mimeType: mimeType, customVariables: customVariables, metadata: metadata)
    }

    /// Field-wise equality (variables and metadata compared in order).
    public static func == (lhs: MkfilePath, rhs: MkfilePath) -> Bool {
        lhs.fsize == rhs.fsize && lhs.fields == rhs.fields
    }
}
