/// One v1 block in progress or complete (qiniu-protocol.md §4.1–4.2), keyed by its blob.
///
/// The ctx a client holds names the blob and the offset; this row is the authority on how many
/// bytes of the block are acknowledged. It outlives the objects made from it until `expiresAt`,
/// because a ctx must stay usable until its advertised `expired_at` (§4.2, §9.4, §9.6).
public struct BlockRecord: Sendable, Equatable {
    /// The blob that holds the block's bytes; also the block's id.
    public var blob: BlobID
    /// The size the client announced in `mkblk/<blockSize>`: 1…4194304.
    public var blockSize: Int64
    /// Bytes acknowledged so far.
    public var offset: Int64
    /// CRC-32 of the bytes acknowledged so far (§7.3), carried in the ctx.
    public var crc32: UInt32
    /// SHA-1 of the block, set exactly when `offset == blockSize`.
    public var sha1: [UInt8]?
    /// Unix seconds after which the block's ctx is no longer honoured and the block may be swept.
    public var expiresAt: Int64
    /// Unix seconds of `mkblk`.
    public var createdAt: Int64
    /// What `MimeSniffer` made of the block's first bytes, recorded by mkblk when its chunk held
    /// the whole sniffing window, so mkfile need not read those bytes back (on S3 a GET per
    /// upload): `.some(nil)` when it recognised nothing; nil when not recorded (a first chunk
    /// shorter than the window, or a row older than the column), and mkfile reads the bytes.
    public var sniffedType: String??

    /// Creates a record.
    public init(
        blob: BlobID, blockSize: Int64, offset: Int64 = 0, crc32: UInt32 = 0, sha1: [UInt8]? = nil,
        expiresAt: Int64, createdAt: Int64, sniffedType: String?? = nil
    ) {
        self.blob = blob
        self.blockSize = blockSize
        self.offset = offset
        self.crc32 = crc32
        self.sha1 = sha1
        self.expiresAt = expiresAt
        self.createdAt = createdAt
        self.sniffedType = sniffedType
    }

    /// Whether every byte of the block has arrived.
    public var isComplete: Bool { offset == blockSize }
}
