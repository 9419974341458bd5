/// The values behind magic and custom variables (qiniu-protocol.md §2) for one stored object.
///
/// Pure: the upload time and the uuid are passed in. Render templates with
/// ``renderJSON(_:)`` (returnBody, JSON callbackBody), ``renderForm(_:)`` (form callbackBody)
/// and ``renderSaveKey(_:)`` (saveKey).
///
/// ```swift
/// var variables = MagicVariables(bucket: "photos", key: "cat.jpg", etag: hash, fsize: 5, mimeType: "image/jpeg")
/// variables.customVariables = [("x:uid", "42")]
/// let body = variables.renderForm(policy.callbackBody ?? "")
/// ```
public struct MagicVariables: Sendable {
    /// `$(bucket)`.
    public var bucket: String
    /// `$(key)`: the final key.
    public var key: String
    /// `$(etag)` and its alias `$(hash)` (§2 [ambiguous → accept both]).
    public var etag: String
    /// `$(fsize)`: size in bytes, a JSON number.
    public var fsize: Int64
    /// `$(mimeType)`: the final MIME type.
    public var mimeType: String
    /// `$(fname)`: the original file name; `nil` renders as an empty string.
    public var fname: String?
    /// `$(ext)` override (with the leading dot); `nil` derives it from ``fname``, then ``mimeType``.
    public var ext: String?
    /// `$(endUser)`: the policy's endUser; `nil` renders as an empty string.
    public var endUser: String?
    /// `$(persistentId)`; `nil` renders as JSON `null` outside strings (no async job ran).
    public var persistentId: String?
    /// `$(uuid)`: a fresh UUID supplied by the caller (not available in saveKey).
    public var uuid: String?
    /// Upload time in Unix seconds; `$(year)`…`$(sec)` in UTC+8 (§2 [ambiguous → UTC+8]), saveKey only.
    public var uploadTime: Int64?
    /// Custom variables, names with their `x:` prefix (`("x:uid", "42")`); the first match wins.
    public var customVariables: [(name: String, value: String)]
    /// Media metadata objects by name (`imageInfo`, `exif`, `avinfo`, `imageAve`), walked with
    /// dotted names (`$(imageInfo.width)`); not available in saveKey. Usually empty locally.
    public var mediaInfo: [String: JSONValue]

    /// Creates the variable set; the optional values can also be set as properties.
    ///
    /// - Parameters:
    ///   - bucket: Target bucket.
    ///   - key: Final key.
    ///   - etag: Object hash.
    ///   - fsize: Size in bytes.
    ///   - mimeType: Final MIME type.
    ///   - fname: Original file name.
    ///   - endUser: Policy endUser.
    ///   - customVariables: `x:` variables.
    ///   - uploadTime: Unix seconds of the upload (for saveKey time parts).
    ///   - uuid: A fresh UUID.
    public init(
        bucket: String, key: String, etag: String, fsize: Int64, mimeType: String, fname: String? = nil,
        endUser: String? = nil, customVariables: [(name: String, value: String)] = [], uploadTime: Int64? = nil,
        uuid: String? = nil
    ) {
        self.bucket = bucket
        self.key = key
        self.etag = etag
        self.fsize = fsize
        self.mimeType = mimeType
        self.fname = fname
        self.endUser = endUser
        self.customVariables = customVariables
        self.uploadTime = uploadTime
        self.uuid = uuid
        self.mediaInfo = [:]
    }

    /// A variable's value before it is written into a template.
    public enum Value: Sendable, Equatable {
        /// Text (quoted outside JSON strings).
        case string(String)
        /// A number (`fsize`).
        case number(Int64)
        /// A JSON value (media metadata).
        case json(JSONValue)
    }

    /// Where a template is rendered; some variables are allowed only in some places (§2 table).
    public enum Usage: Sendable {
        /// `saveKey`: time parts allowed; uuid, persistentId and media metadata not.
        case saveKey
        /// `returnBody`, `callbackBody`: no time parts.
        case body
    }

    /// `$(fprefix)`: ``fname`` without its extension.
    public var fprefix: String {
        guard let fname else { return "" }
        guard let dot = fname.lastIndex(of: ".") else { return fname }
        return String(fname[..<dot])
    }

    /// `$(ext)`: ``ext`` if set, else the extension of ``fname`` with its dot, else one derived
    /// from ``mimeType``, else empty.
    public var resolvedExt: String {
        if let ext { return ext }
        if let fname, let dot = fname.lastIndex(of: ".") { return String(fname[dot...]) }
        return MimeTypes.extension(for: mimeType) ?? ""
    }

    /// Looks a variable up; `nil` means unknown or not available for `usage` (rendered empty).
    ///
    /// - Parameters:
    ///   - name: Name inside `$(…)`, e.g. `key`, `x:uid`, `imageInfo.width`.
    ///   - usage: Where the template is rendered.
    /// - Returns: The value, or `nil`.
    public func value(of name: String, usage: Usage) -> Value? {
        if name.utf8.starts(with: "x:".utf8) {
            return customVariables.first(where: { $0.name == name }).map { .string($0.value) }
        }
        switch name {
        case "bucket": return .string(bucket)
        case "key": return .string(key)
        case "etag", "hash": return .string(etag)
        case "fname": return .string(fname ?? "")
        case "fprefix": return .string(fprefix)
        case "ext": return .string(resolvedExt)
        case "fsize": return .number(fsize)
        case "mimeType": return .string(mimeType)
        case "endUser": return .string(endUser ?? "")
        case "persistentId": return usage == .saveKey ? nil : persistentId.map { .string($0) }
        case "uuid": return usage == .saveKey ? nil : uuid.map { .string($0) }
        case "year", "mon", "day", "hour", "min", "sec":
            guard usage == .saveKey, let uploadTime else { return nil }
            // §2: Qiniu's clock is UTC+8 [ambiguous → UTC+8]; zero-padded 2 digits except year.
            let time = CivilTime(unixSeconds: uploadTime + 8 * 3_600)
            switch name {
            case "year": return .string(String(time.year))
            case "mon": return .string(CivilTime.pad(time.month, 2))
            case "day": return .string(CivilTime.pad(time.day, 2))
            case "hour": return .string(CivilTime.pad(time.hour, 2))
            case "min": return .string(CivilTime.pad(time.minute, 2))
            default: return .string(CivilTime.pad(time.second, 2))
            }
        default:
            guard usage != .saveKey else { return nil }
            // Dotted sub-fields of media objects; arrays are not indexable (§2).
            let path = name.split(separator: ".", omittingEmptySubsequences: false)
            guard var current = mediaInfo[String(path[0])] else { return nil }
            for field in path.dropFirst() {
                guard let next = current[String(field)] else { return nil }
                current = next
            }
            return .json(current)
        }
    }
}
