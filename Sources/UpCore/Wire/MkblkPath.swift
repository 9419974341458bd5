/// `POST /mkblk/<blockSize>` — start a v1 block with its first chunk (qiniu-protocol.md §4.1).
public struct MkblkPath: Sendable, Equatable {
    /// Declared size of the whole block, 1…``QiniuBlock/size`` (4 MiB).
    public var blockSize: Int

    /// Creates a path value.
    ///
    /// - Parameter blockSize: 1…4194304.
    public init(blockSize: Int) {
        self.blockSize = blockSize
    }

    /// Parses a request path as received (percent-decoding as for ``MkfilePath``).
    ///
    /// - Parameter path: The raw path, e.g. `/mkblk/4194304`.
    /// - Returns: The parsed path.
    /// - Throws: ``UpError`` `.badRequest` (400) for a missing, non-decimal or out-of-range size,
    ///   or extra segments.
    public static func parse(_ path: some StringProtocol) throws(UpError) -> MkblkPath {
        let segments = try WirePath.segments(path, after: "/mkblk/")
        guard segments.count == 1 else {
            throw UpError(.badRequest, detail: "mkblk takes exactly one segment, got \(segments.count)")
        }
        let size = try WirePath.integer(segments[0], field: "blockSize", in: 1...Int64(QiniuBlock.size))
        return MkblkPath(blockSize: Int(size))
    }

    /// The request path.
    public var path: String { "/mkblk/\(blockSize)" }
}
