/// One blob as `BlockStore.inventory()` lists it: its id and when its bytes last changed.
///
/// The time is the store's own (a file's mtime; S3's `LastModified` of the blob's newest chunk
/// object), so every up-server instance sharing the store, before or after a restart, sees the
/// same age. A v1 block is appended over minutes or days: its age is its newest chunk's.
public struct ListedBlob: Sendable, Hashable {
    /// The blob.
    public var id: BlobID
    /// Unix seconds of the last write; `.infinity` when the store did not say (never old enough).
    public var modifiedAt: Double

    /// Creates a listing entry.
    public init(id: BlobID, modifiedAt: Double) {
        self.id = id
        self.modifiedAt = modifiedAt
    }
}
