import NativeOS
import Synchronization

/// The file being uploaded, opened once for the whole call and read in bounded regions — a chunk,
/// a part, a fingerprint span — into a few buffers that are reused (``recycle(_:)``): the client
/// never maps or loads a whole file, memory stays bounded by concurrency × chunk size, and a
/// 4 MiB chunk costs one copy from the page cache, not a fresh allocation and a second copy.
final class SourceFile: Sendable {
    /// The largest single read, 4 MiB (a v1 block, the default v2 part).
    static let pieceSize = 4 << 20

    /// The file.
    let path: String
    private let file: ReadableFile
    private let spare = Mutex<[[UInt8]]>([])
    private let keep: Int

    /// Opens `path`; keeps at most `keep` spare buffers.
    init(path: String, keep: Int = 4) throws(UploadError) {
        do {
            file = try ReadableFile(path: path)
        } catch {
            throw UploadError(.file, "cannot open \(path): \(error.reason)")
        }
        self.path = path
        self.keep = keep
    }

    /// `length` bytes at `offset` (at most a few MiB), in a spare buffer when there is one.
    func read(offset: Int64, length: Int) throws(UploadError) -> [UInt8] {
        var buffer = spare.withLock { $0.popLast() } ?? []
        try fill(&buffer, offset: offset, length: length)
        return buffer
    }

    /// Gives back a buffer nothing uses any more (one still shared is copied on its next use,
    /// never overwritten under its other user).
    func recycle(_ buffer: [UInt8]) {
        spare.withLock { spare in
            if spare.count < keep { spare.append(buffer) }
        }
    }

    /// Calls `body` with consecutive pieces (≤ ``pieceSize``) of the region, read into one buffer.
    func forEachPiece(offset: Int64, length: Int64, _ body: ([UInt8]) throws(UploadError) -> Void) throws(UploadError) {
        var done: Int64 = 0
        var buffer = spare.withLock { $0.popLast() } ?? []
        while done < length {
            try fill(&buffer, offset: offset + done, length: Int(min(Int64(Self.pieceSize), length - done)))
            try body(buffer)
            done += Int64(buffer.count)
        }
        recycle(buffer)
    }

    /// Reads exactly `length` bytes into `buffer`; a file that ends earlier changed since the
    /// upload began (it was shorter when the region was planned).
    private func fill(_ buffer: inout [UInt8], offset: Int64, length: Int) throws(UploadError) {
        let read: Int
        do {
            read = try file.read(into: &buffer, count: length, at: offset)
        } catch {
            throw UploadError(.file, "cannot read \(path): \(error.reason)")
        }
        guard read == length else {
            throw UploadError(.fileChanged, "the file changed while uploading: \(path) is shorter than when the upload began")
        }
    }
}
