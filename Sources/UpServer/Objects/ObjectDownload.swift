import HTTPKit

/// Builds the body of a download (`GET /download/…`, `GET /dl/…`) from an object's segments (its
/// manifest, see `StoredObject`), whole or one byte range, keeping memory bounded whatever the
/// object's size:
///
/// - a store that can serve file ranges (`ByteRangeServing`): when the bytes lie in one segment
///   (every form upload, every v1 object ≤ 4 MiB, every v2 object of one part, most ranges) the
///   store hands them as one file range (disk: the blob's file, zero copies; S3: just those
///   bytes, spooled); bytes across several segments are joined by the store when they total more
///   than ``inMemoryLimit``;
/// - otherwise, and for small spans of several segments: read into memory.
struct ObjectDownload: Sendable {
    /// Largest span of several segments read into memory.
    static let inMemoryLimit: Int64 = 8 << 20

    let store: any BlockStore

    /// The response body for `range` of `object` (all of it when `nil`; a range must lie within
    /// `0..<object.fsize`).
    ///
    /// - Throws: `BlockStoreError` for a missing or short blob (the boundary answers 599); a full
    ///   disk for the scratch file (503).
    func body(for object: StoredObject, range: Range<Int64>?) async throws -> Response.Body {
        let wanted = range ?? 0..<object.fsize
        if wanted.isEmpty || object.segments.isEmpty { return .bytes([]) }
        let segments = object.segments
        let pieces = try Segment.pieces(of: wanted, in: segments)
        let length = wanted.count
        if let ranges = store as? any ByteRangeServing, pieces.count == 1 || Int64(length) > Self.inMemoryLimit {
            let joined = try await BlockingWork.run { try ranges.fileRange(joining: segments, range: wanted) }
            return .file(descriptor: joined.descriptor, offset: joined.offset, length: joined.length)
        }
        let store = self.store
        return try await BlockingWork.run {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(length)
            for (blob, inner) in pieces { bytes += try store.read(blob, range: inner) }
            return .bytes(bytes)
        }
    }
}
