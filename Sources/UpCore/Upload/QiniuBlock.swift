/// The block of Qiniu's protocol: 4 MiB, defined once. A v1 block holds at most this many bytes
/// (qiniu-protocol.md §4.1), the etag hashes content in blocks of exactly this size (§7.1), and
/// up-server stores form and `/put` uploads as blobs of this size (one per etag block).
public enum QiniuBlock {
    /// 4 MiB.
    public static let size = 4 * 1024 * 1024
}
