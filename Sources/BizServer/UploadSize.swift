/// One recorded upload's size and time: what a per-user daily byte quota adds up.
public struct UploadSize: Sendable, Equatable {
    /// When the upload was recorded, Unix milliseconds.
    public var receivedAt: Int64
    /// Its size in bytes.
    public var fsize: Int64

    /// Creates a size entry.
    public init(receivedAt: Int64, fsize: Int64) {
        self.receivedAt = receivedAt
        self.fsize = fsize
    }
}
