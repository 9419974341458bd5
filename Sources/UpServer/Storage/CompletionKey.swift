import NativeCrypto

/// Identifies one finished mkfile or v2 complete so a repeat returns the first result (DESIGN.md
/// "mkfile is idempotent"): the bucket plus the SHA-1 of the canonical request — for mkfile the
/// ctx list, fsize and key; for a v2 complete the uploadId, key and (partNumber, etag) list.
public struct CompletionKey: Sendable, Hashable {
    /// The bucket the object was stored in.
    public var bucket: String
    /// SHA-1 (20 bytes) of the canonical request.
    public var requestSHA1: [UInt8]

    /// Creates a key from a precomputed request hash.
    public init(bucket: String, requestSHA1: [UInt8]) {
        self.bucket = bucket
        self.requestSHA1 = requestSHA1
    }

    /// The key of `POST /mkfile/<fsize>[/key/<B64>]` with body `contexts.joined(",")`
    /// (qiniu-protocol.md §4.3).
    ///
    /// Canonical form: `mkfile\n<fsize>\n<key>\n<ctx>,<ctx>…`, where `<key>` is `-` when absent and
    /// `k<utf8 length>:<key>` when present, so `nil`, `""` and a key containing a newline never
    /// collide. Other path pairs (fname, mimeType, x: vars) do not take part: a retry that changes
    /// only those is still the same upload of the same blocks.
    public static func mkfile(bucket: String, key: String?, fsize: Int64, contexts: [String]) -> CompletionKey {
        let keyPart = key.map { "k\($0.utf8.count):\($0)" } ?? "-"
        let canonical = "mkfile\n\(fsize)\n\(keyPart)\n" + contexts.joined(separator: ",")
        return CompletionKey(bucket: bucket, requestSHA1: SHA1.hash(Array(canonical.utf8)))
    }

    /// The key of `POST /buckets/<bucket>/objects/<key>/uploads/<uploadId>` with its parts list
    /// (qiniu-protocol.md §5 complete).
    ///
    /// Canonical form: `complete\n<uploadId>\n<key>\n<n>:<etag>,<n>:<etag>…`, `<key>` as for
    /// mkfile. fname, mimeType, x: vars and metadata do not take part, as for mkfile. The "mkfile\n"
    /// and "complete\n" prefixes keep the two kinds of request apart.
    public static func multipartComplete(
        bucket: String, uploadID: String, key: String?, parts: [(partNumber: Int, etag: String)]
    ) -> CompletionKey {
        let keyPart = key.map { "k\($0.utf8.count):\($0)" } ?? "-"
        let partList = parts.map { "\($0.partNumber):\($0.etag)" }.joined(separator: ",")
        let canonical = "complete\n\(uploadID)\n\(keyPart)\n" + partList
        return CompletionKey(bucket: bucket, requestSHA1: SHA1.hash(Array(canonical.utf8)))
    }
}

/// What to record, with the object, when an mkfile stores it.
public struct NewCompletion: Sendable, Equatable {
    /// The request's identity.
    public var key: CompletionKey
    /// Unix seconds after which the record may be swept: the latest expiry of the request's
    /// ctxs, since after that a repeat gets 701 anyway (§9.6).
    public var expiresAt: Int64

    /// Creates a completion to record.
    public init(key: CompletionKey, expiresAt: Int64) {
        self.key = key
        self.expiresAt = expiresAt
    }
}

/// A recorded finished mkfile.
public struct Completion: Sendable, Equatable {
    /// The request's identity.
    public var key: CompletionKey
    /// The key the object was stored under (after saveKey etc.).
    public var objectKey: String
    /// The object's hash.
    public var etag: String
    /// The JSON answer given the first time (callback reply or returnBody); `nil` until the
    /// handler records it with `ObjectIndex.recordCompletionResult`.
    public var result: String?
    /// When the record may be swept (Unix seconds).
    public var expiresAt: Int64
    /// The outbox entry of the callback stored with the object, if it had one: a repeat whose
    /// first answer is unknown takes its callback's outcome from that entry, never from a second
    /// delivery beside it (scripts/chaos/server-crash: a callback delivered twice).
    public var outboxID: Int64?

    /// Creates a completion record.
    public init(
        key: CompletionKey, objectKey: String, etag: String, result: String?, expiresAt: Int64, outboxID: Int64? = nil
    ) {
        self.key = key
        self.objectKey = objectKey
        self.etag = etag
        self.result = result
        self.expiresAt = expiresAt
        self.outboxID = outboxID
    }
}
