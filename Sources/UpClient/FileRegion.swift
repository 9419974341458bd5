import Foundation

/// Bounded reads of a file region with `FileHandle` (seek, then read): the client never maps or
/// loads a whole file, only the chunk or part it is about to send (so memory is bounded by
/// concurrency × chunk size).
enum FileRegion {
    /// The largest single read, 4 MiB (a v1 block, the default v2 part).
    static let pieceSize = 4 << 20

    /// Reads `length` bytes at `offset` (at most a few MiB: a chunk, a part, a fingerprint span).
    static func read(path: String, offset: Int64, length: Int64) throws(UploadError) -> [UInt8] {
        guard length > 0 else { return [] }
        if length <= Int64(pieceSize) {
            // One read into one buffer: the common case (a 4 MiB chunk) copies the bytes once
            // from the page cache and once into the array the request is sent from.
            return try withHandle(path: path, offset: offset) { handle throws(UploadError) in
                try [UInt8](next(handle, want: Int(length), path: path))
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(Int(length))
        try forEachPiece(path: path, offset: offset, length: length) { out.append(contentsOf: $0) }
        return out
    }

    /// Calls `body` with consecutive pieces (≤ ``pieceSize``) of the region; fails with
    /// ``UploadError/Kind/file`` when the file cannot be read, ``UploadError/Kind/fileChanged``
    /// when it is shorter than the region.
    static func forEachPiece(
        path: String, offset: Int64, length: Int64, _ body: ([UInt8]) throws(UploadError) -> Void
    ) throws(UploadError) {
        guard length > 0 else { return }
        try withHandle(path: path, offset: offset) { handle throws(UploadError) in
            var remaining = length
            while remaining > 0 {
                let piece = try next(handle, want: Int(min(Int64(pieceSize), remaining)), path: path)
                try body([UInt8](piece))
                remaining -= Int64(piece.count)
            }
        }
    }

    private static func withHandle<T>(
        path: String, offset: Int64, _ body: (FileHandle) throws(UploadError) -> T
    ) throws(UploadError) -> T {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw UploadError(.file, "cannot open \(path)")
        }
        defer { try? handle.close() }
        do {
            try handle.seek(toOffset: UInt64(offset))
        } catch {
            throw UploadError(.file, "cannot read \(path): \(error.localizedDescription)")
        }
        return try body(handle)
    }

    /// The next `want` bytes (a short read is continued; the end of the file is a change).
    private static func next(_ handle: FileHandle, want: Int, path: String) throws(UploadError) -> Data {
        var data = Data()
        while data.count < want {
            let piece: Data?
            do {
                piece = try handle.read(upToCount: want - data.count)
            } catch {
                throw UploadError(.file, "cannot read \(path): \(error.localizedDescription)")
            }
            guard let piece, !piece.isEmpty else {
                throw UploadError(.fileChanged, "the file changed while uploading: \(path) is shorter than when the upload began")
            }
            if data.isEmpty { data = piece } else { data.append(piece) }
        }
        return data
    }
}
