import UpCore

/// Makes the `BlobWriter` of each request body: the blob store, the running SHA-1s of v1 blocks
/// and the fsync setting, wired once (`UpRoutes`) for every route that stores bytes.
struct BlobIngest: Sendable {
    /// Where blobs live.
    let store: any BlockStore
    /// Running SHA-1s of v1 blocks.
    let hashes: BlockHashCache
    /// `UpServerConfiguration.syncEveryChunk`.
    let syncEveryChunk: Bool

    /// A writer for one body into `target`.
    func writer(_ target: BlobTarget) -> BlobWriter {
        BlobWriter(target, store: store, hashes: hashes, syncEveryChunk: syncEveryChunk)
    }
}
