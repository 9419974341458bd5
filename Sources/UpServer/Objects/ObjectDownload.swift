import HTTPKit

/// Builds the body of `GET /download/<EncodedEntryURI>` from an object's segments (its manifest,
/// see `StoredObject`), keeping memory bounded whatever the object's size:
///
/// - a store that can serve file ranges (`ByteRangeServing`): one segment (every form upload,
///   every v1 object ≤ 4 MiB, every v2 object of one part) is its blob's file range, zero copies;
///   several are joined by the store when they total more than ``inMemoryLimit``;
/// - otherwise, and for small multi-segment objects: read into memory.
///
/// Downloads are an operator/test facility, not a CDN.
struct ObjectDownload: Sendable {
    /// Largest multi-segment object read into memory.
    static let inMemoryLimit: Int64 = 8 << 20

    let store: any BlockStore

    /// The response body for `object`.
    ///
    /// - Throws: `BlockStoreError` for a missing or short blob (the boundary answers 599); a full
    ///   disk for the scratch file (503).
    func body(for object: StoredObject) async throws -> Response.Body {
        let segments = object.segments
        if object.fsize == 0 || segments.isEmpty { return .bytes([]) }
        if let ranges = store as? any ByteRangeServing, segments.count == 1 || object.fsize > Self.inMemoryLimit {
            let range = try await BlockingWork.run { try ranges.fileRange(joining: segments) }
            return .file(descriptor: range.descriptor, offset: range.offset, length: range.length)
        }
        let store = self.store
        return try await BlockingWork.run {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(Int(clamping: object.fsize))
            for segment in segments { bytes += try store.read(segment.blob, range: 0..<segment.length) }
            return .bytes(bytes)
        }
    }
}
