/// One piece of an object: a whole blob, in order.
public struct Segment: Sendable, Hashable {
    /// The blob holding the bytes.
    public var blob: BlobID
    /// Its length in bytes.
    public var length: Int64

    /// Creates a segment.
    public init(blob: BlobID, length: Int64) {
        self.blob = blob
        self.length = length
    }
}

/// An object as the index keeps it.
///
/// Manifest, not copy (DESIGN.md "mkfile and the disk"): an object is its ordered list of block
/// (or part) blobs, written once when the chunks arrive. Concatenating blocks into one file —
/// even with copy_file_range — would write every byte a second time and make mkfile O(bytes);
/// the manifest makes mkfile O(blocks) and keeps the upload benchmark bound by the first write.
/// Reading an object streams its segments in order.
public struct StoredObject: Sendable, Equatable {
    /// The bucket.
    public var bucket: String
    /// The key (any string a client may send; never used as a path).
    public var key: String
    /// The `hash` (qiniu-protocol.md §7).
    public var etag: String
    /// Size in bytes: the sum of the segments' lengths.
    public var fsize: Int64
    /// The MIME type.
    public var mimeType: String
    /// The blobs that make up the object, in order.
    public var segments: [Segment]
    /// `x-qn-meta-*` metadata, names as sent.
    public var metadata: [String: String]
    /// Unix seconds of the upload (Qiniu's `putTime` is this × 10⁷; the handler converts).
    public var putTime: Int64
    /// PutPolicy `deleteAfterDays`, if set.
    public var deleteAfterDays: Int?
    /// PutPolicy `fileType` (0 standard, 1 infrequent, …).
    public var fileType: Int
    /// 1 for the first object under this key, one more on every replacement; set by the index.
    public var version: Int64

    /// Creates an object description. `version` is ignored by `ObjectIndex.putObject`, which assigns it.
    public init(
        bucket: String, key: String, etag: String, fsize: Int64, mimeType: String, segments: [Segment],
        metadata: [String: String] = [:], putTime: Int64, deleteAfterDays: Int? = nil, fileType: Int = 0,
        version: Int64 = 0
    ) {
        self.bucket = bucket
        self.key = key
        self.etag = etag
        self.fsize = fsize
        self.mimeType = mimeType
        self.segments = segments
        self.metadata = metadata
        self.putTime = putTime
        self.deleteAfterDays = deleteAfterDays
        self.fileType = fileType
        self.version = version
    }
}
