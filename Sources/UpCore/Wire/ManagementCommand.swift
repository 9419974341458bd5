/// One object-management operation of Qiniu's rs service, parsed from its path — the same text
/// whether it is a request of its own (`POST /delete/<EncodedEntryURI>`) or one `op=` of a
/// `/batch` (`delete/<EncodedEntryURI>`). Shapes as the Python SDK's `BucketManager` and
/// `build_batch_*` write them (developer.qiniu.com/kodo rs: stat, delete, move, copy, chgm,
/// deleteAfterDays):
///
/// ```
/// stat/<entry>                      delete/<entry>
/// move/<src>/<dst>[/force/<bool>]   copy/<src>/<dst>[/force/<bool>]
/// chgm/<entry>[/mime/<B64 type>][/x-qn-meta-<name>/<B64 value>]*
/// deleteAfterDays/<entry>/<days>    (0 removes the rule)
/// ```
///
/// Segments are percent-decoded one by one after splitting (`WirePath`). Anything else —
/// another verb, a missing or malformed entry, an entry without a key, a bad `force`, a
/// negative day count, chgm's `cond` (not supported) — is `400 bad request`; a key that
/// ``ObjectKeyRule`` refuses is `400 invalid key`.
public enum ManagementCommand: Sendable, Equatable {
    /// `stat`: the object's attributes.
    case stat(Entry)
    /// `delete`.
    case delete(Entry)
    /// `move` (rename); `force` allows replacing an existing destination.
    case move(from: Entry, to: Entry, force: Bool)
    /// `copy`; `force` allows replacing an existing destination.
    case copy(from: Entry, to: Entry, force: Bool)
    /// `chgm`: a new MIME type (`nil`: keep) and metadata to set.
    case changeMime(Entry, mimeType: String?, metadata: [String: String])
    /// `deleteAfterDays`: expire `days` after upload; `nil` (sent as 0) removes the rule.
    case deleteAfterDays(Entry, days: Int?)

    /// A bucket and a key from an `EncodedEntryURI`.
    public struct Entry: Sendable, Hashable {
        /// The bucket.
        public var bucket: String
        /// The key.
        public var key: String

        /// Creates an entry.
        public init(bucket: String, key: String) {
            self.bucket = bucket
            self.key = key
        }

        /// The entry an `EncodedEntryURI` path segment names: the one decoder of management
        /// paths (commands and `/download`).
        ///
        /// - Throws: `UpError(.badRequest)` when it is not one or has no key;
        ///   `UpError(.invalidKey)` when the key breaks ``ObjectKeyRule``.
        public init(encoded text: String) throws(UpError) {
            guard let (bucket, key) = EncodedEntryURI.decode(text), let key else {
                throw UpError(.badRequest, detail: "bad EncodedEntryURI")
            }
            try ObjectKeyRule.check(key)
            self.init(bucket: bucket, key: key)
        }
    }

    /// The verbs, as the first path segment names them.
    public static let verbs: Set<String> = ["stat", "delete", "move", "copy", "chgm", "deleteAfterDays"]

    /// Longest MIME type chgm accepts (Qiniu's documented limit).
    public static let maxMimeTypeBytes = 200

    /// Parses an operation: a request path (`/move/…`) or a batch `op` (`move/…`).
    ///
    /// - Throws: `UpError(.badRequest)` with a log-only detail.
    public static func parse(_ text: some StringProtocol) throws(UpError) -> ManagementCommand {
        let path = text.hasPrefix("/") ? String(text) : "/" + text
        let segments = try WirePath.segments(path, after: "/")
        guard let verb = segments.first, verbs.contains(verb), segments.count >= 2 else {
            throw UpError(.badRequest, detail: "unknown operation \(segments.first ?? "")")
        }
        let entry = try Entry(encoded: segments[1])
        let rest = Array(segments.dropFirst(2))
        switch verb {
        case "stat", "delete":
            guard rest.isEmpty else { throw UpError(.badRequest, detail: "\(verb) takes one entry") }
            return verb == "stat" ? .stat(entry) : .delete(entry)
        case "move", "copy":
            guard let target = rest.first else { throw UpError(.badRequest, detail: "\(verb) needs a destination") }
            let destination = try Entry(encoded: target)
            let force: Bool
            switch Array(rest.dropFirst()) {
            case []: force = false
            case ["force", "true"]: force = true
            case ["force", "false"]: force = false
            default: throw UpError(.badRequest, detail: "\(verb): expected /force/true or /force/false")
            }
            return verb == "move"
                ? .move(from: entry, to: destination, force: force) : .copy(from: entry, to: destination, force: force)
        case "deleteAfterDays":
            guard rest.count == 1 else { throw UpError(.badRequest, detail: "deleteAfterDays takes a day count") }
            let days = try WirePath.integer(rest[0], field: "deleteAfterDays", in: 0...36_500_000)
            return .deleteAfterDays(entry, days: days == 0 ? nil : Int(days))
        default:
            return try changeMime(entry, rest)
        }
    }

    /// chgm's `name/value` pairs after the entry.
    private static func changeMime(_ entry: Entry, _ pairs: [String]) throws(UpError) -> ManagementCommand {
        guard pairs.count % 2 == 0 else { throw UpError(.badRequest, detail: "chgm: a name without a value") }
        var mimeType: String?
        var metadata: [String: String] = [:]
        var index = 0
        while index < pairs.count {
            let name = pairs[index]
            guard let value = URLSafeBase64.decode(pairs[index + 1]).flatMap({ String(validating: $0, as: UTF8.self) })
            else { throw UpError(.badRequest, detail: "chgm: \(name) is not base64 UTF-8") }
            if name == "mime" {
                guard value.utf8.count <= maxMimeTypeBytes, !value.contains("%") else {
                    throw UpError(.badRequest, detail: "chgm: bad mime type")
                }
                mimeType = value.isEmpty ? nil : value
            } else if name.hasPrefix("x-qn-meta-"), isMetaName(name.dropFirst("x-qn-meta-".count)) {
                metadata[name] = value
            } else {
                throw UpError(.badRequest, detail: "chgm: unsupported field \(name.prefix(64))")
            }
            index += 2
        }
        guard metadata.reduce(0, { $0 + $1.key.utf8.count + $1.value.utf8.count }) <= 1024 else {
            throw UpError(.badRequest, detail: "chgm: metadata over 1024 bytes")
        }
        return .changeMime(entry, mimeType: mimeType, metadata: metadata)
    }

    /// Qiniu's rule for a metadata name: letters, digits, `_`, `-`; 1–50 bytes.
    private static func isMetaName(_ name: Substring) -> Bool {
        !name.isEmpty && name.utf8.count <= 50
            && name.utf8.allSatisfy { $0 == 0x2D || $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
    }
}
