/// Why a `BlockStore` call failed. The handlers map these to protocol errors; none of them is
/// something a client can cause by sending bytes, except `missingBytes` after data loss.
/// A full disk is not among them: it is `UpError(.insufficientStorage)`, which every handler
/// answers as it is (see `InsufficientStorage`).
public enum BlockStoreError: Error, Equatable, Sendable {
    /// There is no blob with this id (never created, or removed).
    case notFound(BlobID)
    /// The blob is shorter than the offset the caller says was acknowledged: bytes a client was
    /// told are stored are gone (a disk or file system lost them). Never repaired silently.
    case missingBytes(BlobID, expected: Int64, actual: Int64)
    /// A read asked for bytes beyond the end of the blob.
    case outOfRange(BlobID, requested: Range<Int64>, length: Int64)
    /// The file system refused an operation; `reason` is its description.
    case io(BlobID?, reason: String)
}
