import Foundation
import HTTPKit
import NativeCrypto
import UpCore

/// Builds the body of `GET /download/<EncodedEntryURI>` from an object's segments (its manifest,
/// see `StoredObject`), keeping memory bounded whatever the object's size:
///
/// - one segment in a `FileBlockStore` (every form upload, every v1 object ≤ 4 MiB, every v2
///   object of one part): the blob file itself, handed to the server as a descriptor range —
///   zero copies;
/// - several segments up to ``inMemoryLimit`` in total: read into memory;
/// - larger multi-segment objects: concatenated into an unlinked temporary file under
///   `<dataDir>/tmp` (same disk as the blobs, not a possibly RAM-backed /tmp), served by
///   descriptor. HTTPKit's response body is bytes or one file range, not a stream, so this copy
///   is the price of a bounded footprint; downloads are an operator/test facility, not a CDN.
/// - any other store (the in-memory one of tests): read into memory.
struct ObjectDownload: Sendable {
    /// Largest multi-segment object read into memory.
    static let inMemoryLimit: Int64 = 8 << 20
    /// Piece size when copying segments.
    static let copyPieceSize = 1 << 20

    let store: any BlockStore

    /// The response body for `object`.
    ///
    /// - Throws: `BlockStoreError` for a missing or short blob (the handler answers 599).
    func body(for object: StoredObject) async throws -> Response.Body {
        let store = self.store
        let segments = object.segments
        if object.fsize == 0 || segments.isEmpty { return .bytes([]) }
        if let files = store as? FileBlockStore, segments.count == 1 {
            let segment = segments[0]
            return try await BlockingWork.run { try Self.fileBody(files.url(of: segment.blob), length: segment.length) }
        }
        if let files = store as? FileBlockStore, object.fsize > Self.inMemoryLimit {
            return try await BlockingWork.run { try Self.concatenated(segments, files: files) }
        }
        return try await BlockingWork.run {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(Int(clamping: object.fsize))
            for segment in segments {
                bytes += try store.read(segment.blob, range: 0..<segment.length)
            }
            return .bytes(bytes)
        }
    }

    /// `length` bytes of `file` from its start, as a descriptor the server owns.
    private static func fileBody(_ file: URL, length: Int64) throws -> Response.Body {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        guard size >= UInt64(length) else {
            throw BlockStoreError.io(nil, reason: "blob \(file.lastPathComponent) shorter than its segment")
        }
        // The server closes the descriptor it is given; the handle closes its own.
        let descriptor = dup(handle.fileDescriptor)
        guard descriptor >= 0 else { throw BlockStoreError.io(nil, reason: "dup failed") }
        return .file(descriptor: descriptor, offset: 0, length: UInt64(length))
    }

    /// Copies the segments, in order, into a temporary file that is unlinked as soon as it is
    /// open, so nothing is left behind however the response ends.
    private static func concatenated(_ segments: [Segment], files: FileBlockStore) throws -> Response.Body {
        let directory = temporaryDirectory(of: files)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("download-" + Hex.encode(SecureRandom.bytes(12)))
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw BlockStoreError.io(nil, reason: "cannot create \(file.path)")
        }
        defer { try? FileManager.default.removeItem(at: file) }
        let writer = try FileHandle(forWritingTo: file)
        defer { try? writer.close() }
        var total: Int64 = 0
        for segment in segments {
            try files.forEachChunk(of: segment.blob, range: 0..<segment.length, size: copyPieceSize) { piece in
                try writer.write(contentsOf: Data(piece))
            }
            total += segment.length
        }
        return try fileBody(file, length: total)
    }

    /// `<dataDir>/tmp`: the blob directory's sibling. `UpServer.open` empties it at startup.
    static func temporaryDirectory(of files: FileBlockStore) -> URL {
        files.directory.deletingLastPathComponent().appendingPathComponent("tmp", isDirectory: true)
    }
}
