internal import NativeCrypto

/// Streaming v1 etag (qiniu-protocol.md §7.1): feed bytes in pieces of any size; the hasher
/// cuts 4 MiB blocks itself and keeps only one SHA-1 (20 bytes) per finished block, so memory
/// stays bounded whatever the object size.
///
/// ```swift
/// var hasher = EtagHasher()
/// for chunk in chunks { hasher.update(chunk) }
/// let etag = hasher.finalize().etag
/// ```
public struct EtagHasher: ~Copyable {
    private var current: Digest
    private var bytesInBlock = 0
    private var digests: [[UInt8]] = []
    /// Bytes fed so far.
    public private(set) var byteCount: Int64 = 0

    /// Creates an empty hasher.
    public init() {
        current = Digest(.sha1)
    }

    /// Feeds the next bytes.
    ///
    /// - Parameter bytes: The next piece of the content, any length.
    public mutating func update(_ bytes: some Collection<UInt8>) {
        var rest = bytes[...]
        while !rest.isEmpty {
            if bytesInBlock == QiniuBlock.size { finishBlock() }
            let take = min(QiniuBlock.size - bytesInBlock, rest.count)
            let end = rest.index(rest.startIndex, offsetBy: take)
            current.update(rest[..<end])
            bytesInBlock += take
            byteCount += Int64(take)
            rest = rest[end...]
        }
    }

    private mutating func finishBlock() {
        var finished = Digest(.sha1)
        swap(&finished, &current)
        digests.append(finished.finalize())
        bytesInBlock = 0
    }

    /// What a finished hasher knows.
    public struct Result: Sendable, Equatable {
        /// SHA-1 of each 4 MiB block, in order (one, of the empty string, for empty content).
        public let blockDigests: [[UInt8]]
        /// Total bytes.
        public let byteCount: Int64

        /// The v1 etag (§7.1).
        public var etag: String { Etag.fromBlockDigests(blockDigests) }

        /// The digest of this content as one v2 *part* (§7.2): SHA-1 of the part if it is one
        /// block (≤ 4 MiB), else SHA-1 of the concatenated block SHA-1s.
        public var partDigest: [UInt8] {
            blockDigests.count == 1 ? blockDigests[0] : SHA1.hash(blockDigests.flatMap { $0 })
        }
    }

    /// Finishes hashing.
    ///
    /// - Returns: Block digests and size, from which the etag and the v2 part digest follow.
    public consuming func finalize() -> Result {
        var digests = self.digests
        digests.append(current.finalize())
        return Result(blockDigests: digests, byteCount: byteCount)
    }
}
