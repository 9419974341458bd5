/// A verified upload callback, recorded once per (bucket, key, hash).
///
/// The up-server may deliver the same callback more than once (it retries until acknowledged,
/// DESIGN.md "Callbacks never get lost"), so the store keys records by the object's identity,
/// not by delivery. The same key uploaded again with other content has another hash and is a new
/// version, hence a new record.
public struct UploadRecord: Sendable, Equatable, Codable {
    /// Public id: `"up_"` + 26 Crockford base32 characters, time-sortable (see
    /// `UploadRecordIDGenerator`). Assigned by the store on insert.
    public var id: String
    /// The API client the upload token was issued to; listings are scoped to it.
    public var clientID: String
    /// The bucket the object was stored in.
    public var bucket: String
    /// The object key, verbatim (may contain `/`, `../`, `:` or any Unicode).
    public var key: String
    /// The object's Qiniu etag.
    public var hash: String
    /// Object size in bytes.
    public var fsize: Int64
    /// The MIME type the up-server detected or was told.
    public var mimeType: String
    /// The file name the client sent.
    public var fname: String
    /// The policy's `endUser`, empty when absent.
    public var endUser: String
    /// The trace id that joins token, chunks, mkfile and callback in the logs.
    public var traceID: String
    /// The client's `x:` variables, keys including the `x:` prefix.
    public var vars: [String: String]
    /// When the first delivery of this callback was recorded, in Unix milliseconds.
    public var receivedAt: Int64

    /// Creates a record from a new upload plus the id and time a store assigned to it.
    public init(id: String, upload: NewUploadRecord, receivedAt: Int64) {
        self.id = id
        self.clientID = upload.clientID
        self.bucket = upload.bucket
        self.key = upload.key
        self.hash = upload.hash
        self.fsize = upload.fsize
        self.mimeType = upload.mimeType
        self.fname = upload.fname
        self.endUser = upload.endUser
        self.traceID = upload.traceID
        self.vars = upload.vars
        self.receivedAt = receivedAt
    }
}

/// A verified callback about to be recorded: an `UploadRecord` before the store gives it an id
/// and a time.
public struct NewUploadRecord: Sendable, Equatable {
    /// The API client the upload token was issued to.
    public var clientID: String
    /// The bucket the object was stored in.
    public var bucket: String
    /// The object key, verbatim.
    public var key: String
    /// The object's Qiniu etag.
    public var hash: String
    /// Object size in bytes.
    public var fsize: Int64
    /// The object's MIME type.
    public var mimeType: String
    /// The file name the client sent.
    public var fname: String
    /// The policy's `endUser`, empty when absent.
    public var endUser: String
    /// The trace id carried in the policy's `x:` variables.
    public var traceID: String
    /// The client's `x:` variables.
    public var vars: [String: String]

    /// Creates a record to store; the optional fields default to empty.
    public init(
        clientID: String,
        bucket: String,
        key: String,
        hash: String,
        fsize: Int64,
        mimeType: String = "",
        fname: String = "",
        endUser: String = "",
        traceID: String = "",
        vars: [String: String] = [:]
    ) {
        self.clientID = clientID
        self.bucket = bucket
        self.key = key
        self.hash = hash
        self.fsize = fsize
        self.mimeType = mimeType
        self.fname = fname
        self.endUser = endUser
        self.traceID = traceID
        self.vars = vars
    }
}
