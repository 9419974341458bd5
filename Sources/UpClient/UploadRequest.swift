/// What to upload, under which key, with which token.
public struct UploadRequest: Sendable {
    /// The local file.
    public var filePath: String
    /// The key wish; `nil` lets the policy's saveKey (or the etag) name the object.
    public var key: String?
    /// Where the upload token comes from.
    public var token: TokenSource
    /// Where the resume checkpoint lives; `nil` uploads without one (nothing survives a pause).
    public var checkpointPath: String?
    /// The file name sent as `fname`; default (nil): the last path component of ``filePath``.
    public var fname: String?
    /// The MIME type sent with the upload; nil lets the server decide.
    public var mimeType: String?
    /// Custom variables, names with their `x:` prefix (`"x:name"` → value).
    public var customVariables: [String: String] = [:]
    /// Metadata, names with their `x-qn-meta-` prefix.
    public var metadata: [String: String] = [:]

    /// Creates a request; see each property.
    public init(filePath: String, key: String?, token: TokenSource, checkpointPath: String? = nil) {
        self.filePath = filePath
        self.key = key
        self.token = token
        self.checkpointPath = checkpointPath
    }

    /// ``fname`` or the file's last path component.
    var resolvedFname: String {
        if let fname { return fname }
        return filePath.split(separator: "/").last.map(String.init) ?? filePath
    }

    /// Custom variables sorted by name (stable wire order).
    var sortedVariables: [(name: String, value: String)] {
        customVariables.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
    }

    /// Metadata sorted by name (stable wire order).
    var sortedMetadata: [(name: String, value: String)] {
        metadata.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
    }
}
