/// One stored part of a v2 upload (qiniu-protocol.md §5).
public struct UploadPart: Sendable, Equatable {
    /// The upload it belongs to.
    public var uploadID: String
    /// 1…10000.
    public var partNumber: Int
    /// The blob holding its bytes.
    public var blob: BlobID
    /// Size in bytes.
    public var size: Int64
    /// Lower-case hex MD5 (the answer's `md5`).
    public var md5: String
    /// The part etag given to the client, checked again at complete.
    public var etag: String
    /// The part digest of §7.2 (`EtagHasher.Result.partDigest`), so complete computes the
    /// object hash without re-reading any part.
    public var digest: [UInt8]
    /// Unix seconds of the upload of this part.
    public var putTime: Int64
    /// What `MimeSniffer` made of the part's first bytes, recorded as the part streamed in, so
    /// complete need not read them back when part 1 is sniffed: `.some(nil)` when it recognised
    /// nothing; nil when not recorded (a row older than the column), and complete reads them.
    public var sniffedType: String??

    /// Creates a part description.
    public init(
        uploadID: String, partNumber: Int, blob: BlobID, size: Int64, md5: String, etag: String,
        digest: [UInt8], putTime: Int64, sniffedType: String?? = nil
    ) {
        self.uploadID = uploadID
        self.partNumber = partNumber
        self.blob = blob
        self.size = size
        self.md5 = md5
        self.etag = etag
        self.digest = digest
        self.putTime = putTime
        self.sniffedType = sniffedType
    }

    /// Valid part numbers (§5).
    public static let numbers = 1...10000

    /// The segment this part contributes to an object.
    public var segment: Segment { Segment(blob: blob, length: size) }
}

/// One page of `MultipartIndex.listParts`.
public struct PartListing: Sendable, Equatable {
    /// Parts with numbers above the marker, ascending.
    public var parts: [UploadPart]
    /// The marker for the next page; 0 when there are no more parts (§5 `partNumberMarker`).
    public var nextMarker: Int

    /// Creates a page.
    public init(parts: [UploadPart], nextMarker: Int) {
        self.parts = parts
        self.nextMarker = nextMarker
    }
}

/// A (partNumber, etag) pair from a complete request body.
public struct PartReference: Sendable, Equatable {
    /// The part number.
    public var partNumber: Int
    /// The etag the client says the part has.
    public var etag: String

    /// Creates a reference.
    public init(partNumber: Int, etag: String) {
        self.partNumber = partNumber
        self.etag = etag
    }
}
