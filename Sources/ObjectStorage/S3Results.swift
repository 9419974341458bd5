public import HTTPTransport

/// An object's metadata, from `HEAD` (or the head of a `GET`).
public struct S3ObjectInfo: Sendable, Equatable {
    /// Bytes in the object (for a ranged GET: in the whole object).
    public var size: Int64
    /// The ETag, quotes removed.
    public var etag: String
    /// `Content-Type`, when the store reports one.
    public var contentType: String?
}

/// A `GET` in progress: metadata plus the body, streamed. Read ``body`` to its end or cancel it.
public struct S3Download: Sendable {
    /// The object's metadata.
    public var info: S3ObjectInfo
    /// The byte range being sent (the whole object when no range was asked for).
    public var range: Range<Int64>
    /// The bytes of ``range``.
    public var body: ResponseBody
}

/// One object in a listing.
public struct S3ListedObject: Sendable, Equatable {
    /// The key.
    public var key: String
    /// Bytes.
    public var size: Int64
    /// The ETag, quotes removed.
    public var etag: String
    /// `LastModified` in Unix seconds (the store's clock, when the object was last written);
    /// nil when the store sent none or one ``S3Timestamp`` cannot read.
    public var lastModified: Double? = nil
}

/// One page of `ListObjectsV2`.
public struct S3ObjectListing: Sendable {
    /// The objects of this page, in key order.
    public var objects: [S3ListedObject]
    /// Pass to the next call to continue; nil on the last page.
    public var continuationToken: String?
}

/// An unfinished multipart upload, from `ListMultipartUploads`.
public struct S3MultipartUpload: Sendable, Equatable {
    /// The object key it will create.
    public var key: String
    /// Its upload id.
    public var uploadId: String
    /// When it was initiated, as the store wrote it (ISO 8601), for age-based sweeps.
    public var initiated: String
}

/// One page of `ListMultipartUploads`.
public struct S3MultipartUploadListing: Sendable {
    /// Where the next page starts: the markers the store returned, passed back as they came.
    /// AWS sends both `NextKeyMarker` and `NextUploadIdMarker`; SeaweedFS 4.48 orders uploads by
    /// upload id and sends only `NextUploadIdMarker` (and then ignores a key marker), so neither
    /// is assumed.
    public struct Marker: Sendable, Equatable {
        /// `key-marker`, when the store gave one.
        public var keyMarker: String?
        /// `upload-id-marker`, when the store gave one.
        public var uploadIdMarker: String?
    }

    /// The uploads of this page, in the store's order.
    public var uploads: [S3MultipartUpload]
    /// Pass to the next call to continue; nil on the last page.
    public var next: Marker?
}

/// A part of a multipart upload, for `CompleteMultipartUpload`.
public struct S3CompletedPart: Sendable, Equatable {
    /// 1…10000, ascending in the completion list.
    public var number: Int
    /// The ETag the store returned for the part.
    public var etag: String

    /// Creates a part reference.
    public init(number: Int, etag: String) {
        self.number = number
        self.etag = etag
    }
}

extension String {
    /// An ETag without its surrounding quotes.
    var unquotedETag: String {
        var text = Substring(self)
        if text.hasPrefix("\"") { text = text.dropFirst() }
        if text.hasSuffix("\"") { text = text.dropLast() }
        return String(text)
    }
}
