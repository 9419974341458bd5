import Foundation
import NativeCrypto

/// Bounded reads of a file region with `FileHandle` (seek, then read at most
/// ``pieceSize`` at a time): the client never maps or loads a whole file, and never holds
/// more than one piece per request in flight.
enum FileRegion {
    /// The largest read, 1 MiB.
    static let pieceSize = 1 << 20

    /// Reads `length` bytes at `offset` (a region of at most a few MiB: fingerprints).
    static func read(path: String, offset: Int64, length: Int64) throws(UploadError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Int(length))
        try forEachPiece(path: path, offset: offset, length: length) { out.append(contentsOf: $0) }
        return out
    }

    /// CRC-32 (§7.3) of a region, read piece by piece.
    static func crc32(path: String, offset: Int64, length: Int64) throws(UploadError) -> UInt32 {
        var crc = CRC32()
        try forEachPiece(path: path, offset: offset, length: length) { crc.update($0) }
        return crc.value
    }

    /// Lower-case hex MD5 of a region (the v2 part's `Content-MD5`, §5), read piece by piece.
    static func md5Hex(path: String, offset: Int64, length: Int64) throws(UploadError) -> String {
        var digest = Digest(.md5)
        try forEachPiece(path: path, offset: offset, length: length) { digest.update($0) }
        return Hex.encode(digest.finalize())
    }

    /// Calls `body` with consecutive pieces of the region; fails with ``UploadError/Kind/file``
    /// when the file cannot be read or is shorter than the region.
    static func forEachPiece(
        path: String, offset: Int64, length: Int64, _ body: ([UInt8]) throws(UploadError) -> Void
    ) throws(UploadError) {
        guard length > 0 else { return }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw UploadError(.file, "cannot open \(path)")
        }
        defer { try? handle.close() }
        do {
            try handle.seek(toOffset: UInt64(offset))
            var remaining = length
            while remaining > 0 {
                let want = Int(min(Int64(pieceSize), remaining))
                guard let data = try handle.read(upToCount: want), !data.isEmpty else {
                    throw UploadError(.file, "\(path) is shorter than expected (changed during the upload?)")
                }
                try body([UInt8](data))
                remaining -= Int64(data.count)
            }
        } catch let error as UploadError {
            throw error
        } catch {
            throw UploadError(.file, "cannot read \(path): \(error.localizedDescription)")
        }
    }
}
