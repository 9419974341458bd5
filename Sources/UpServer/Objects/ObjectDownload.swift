import HTTPKit

/// Builds the body of a download (`GET /download/…`, `GET /dl/…`) from an object's segments (its
/// manifest, see `StoredObject`), whole or one byte range, keeping memory bounded whatever the
/// object's size:
///
/// - a store that can serve file ranges (`ByteRangeServing`): when the bytes lie in one segment
///   (every form upload, every v1 object ≤ 4 MiB, every v2 object of one part, most ranges) they
///   are that blob's file range, zero copies; bytes across several segments are joined by the
///   store when they total more than ``inMemoryLimit``;
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
        // The segments the range touches, and where it starts in the first of them.
        var touched: [Segment] = []
        var skip: Int64 = 0
        var offset: Int64 = 0
        for segment in object.segments {
            let span = offset..<(offset + segment.length)
            if span.overlaps(wanted) {
                if touched.isEmpty { skip = wanted.lowerBound - offset }
                touched.append(segment)
            }
            offset += segment.length
        }
        let length = wanted.count
        let segments = touched, start = skip
        if let ranges = store as? any ByteRangeServing, touched.count == 1 || Int64(length) > Self.inMemoryLimit {
            let joined = try await BlockingWork.run { try ranges.fileRange(joining: segments) }
            return .file(
                descriptor: joined.descriptor, offset: joined.offset + UInt64(start), length: UInt64(length))
        }
        let store = self.store
        return try await BlockingWork.run {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(length)
            var from = start
            for segment in segments where bytes.count < length {
                let end = min(segment.length, from + Int64(length - bytes.count))
                bytes += try store.read(segment.blob, range: from..<end)
                from = 0
            }
            return .bytes(bytes)
        }
    }
}
