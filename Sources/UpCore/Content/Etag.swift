internal import NativeCrypto

/// The object hash of qiniu-protocol.md §7: the `hash` field everywhere.
public enum Etag {
    /// v1 etag of in-memory content (§7.1). For streams use ``EtagHasher``.
    ///
    /// - Parameter bytes: The whole content.
    /// - Returns: A 28-character etag starting with `F` or `l`.
    public static func of(_ bytes: some Collection<UInt8>) -> String {
        var hasher = EtagHasher()
        hasher.update(bytes)
        return hasher.finalize().etag
    }

    /// v1 etag from the SHA-1s of the 4 MiB blocks (§7.1): one block →
    /// `B64(0x16 ‖ d₁)`; more → `B64(0x96 ‖ SHA1(d₁ ‖ d₂ ‖ …))`.
    ///
    /// - Parameter digests: 20-byte SHA-1 per block, in order; empty content is one block of
    ///   `SHA1("")` (an empty list is treated the same way).
    /// - Returns: The etag.
    public static func fromBlockDigests(_ digests: [[UInt8]]) -> String {
        switch digests.count {
        case 0: return URLSafeBase64.encode([0x16] + SHA1.hash([UInt8]()))
        case 1: return URLSafeBase64.encode([0x16] + digests[0])
        default: return URLSafeBase64.encode([0x96] + SHA1.hash(digests.flatMap { $0 }))
        }
    }

    /// One part of a v2 multipart upload, for ``v2(parts:)``.
    public struct Part: Sendable, Equatable {
        /// ``EtagHasher/Result/partDigest`` of the part.
        public let digest: [UInt8]
        /// Part size in bytes.
        public let size: Int64

        /// Creates a part description.
        ///
        /// - Parameters:
        ///   - digest: The part digest (§7.2).
        ///   - size: Size in bytes.
        public init(digest: [UInt8], size: Int64) {
            self.digest = digest
            self.size = size
        }
    }

    /// Hash of an object assembled from v2 parts (§7.2, qshell `EtagV2`).
    ///
    /// When every part but the last is exactly 4 MiB and the last is at most 4 MiB, this is
    /// the v1 etag (each part digest is then its block SHA-1), so clients comparing `hash` with
    /// a local v1 etag keep working. Otherwise `B64(0x9e ‖ SHA1(d₁ ‖ d₂ ‖ …))`, starting with `n`.
    ///
    /// - Parameter parts: The parts in order.
    /// - Returns: The etag.
    public static func v2(parts: [Part]) -> String {
        let block = Int64(QiniuBlock.size)
        let isV1Layout = parts.indices.allSatisfy { index in
            index == parts.count - 1 ? parts[index].size <= block : parts[index].size == block
        }
        if isV1Layout { return fromBlockDigests(parts.map(\.digest)) }
        return URLSafeBase64.encode([0x9E] + SHA1.hash(parts.flatMap(\.digest)))
    }
}
