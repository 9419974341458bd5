import Basics
import HTTPKit

/// Builds the body of a download (`GET /download/…`, `GET /dl/…`) from an object's segments (its
/// manifest, see `StoredObject`), whole or one byte range, keeping memory bounded whatever the
/// object's size and writing nothing to a local disk:
///
/// - bytes within one segment of a store that serves file ranges (`ByteRangeServing`, the disk:
///   every form upload, every v1 object ≤ 4 MiB, every v2 object of one part, most ranges) are
///   that blob's file range, sent with sendfile, unless the blob is small enough to be a row
///   (`InlineBlobs`);
/// - spans of at most ``inMemoryLimit`` bytes otherwise are read into memory;
/// - anything else streams from the store while it is sent (`Response.Body.stream` over a
///   `SegmentReader`: S3 ranged GETs, or disk blobs one after the other), at most about 2 MiB
///   in memory per download.
///
/// A streamed body reads its first piece before the response is given, so a blob missing at the
/// start still answers with the boundary's status; a store failing later cuts the connection
/// mid-body (the client sees fewer bytes than `Content-Length`, `ResponseBodySource`).
struct ObjectDownload: Sendable {
    /// Largest span not in one local file that is read into memory rather than streamed.
    static let inMemoryLimit: Int64 = 1 << 20

    let store: any BlockStore

    /// The response body for `range` of `object` (all of it when `nil`; a range must lie within
    /// `0..<object.fsize`). `prime: false` (a `HEAD`, which sends no body) skips reading the
    /// first piece of a streamed body.
    ///
    /// - Throws: `BlockStoreError` for a missing or short blob (the boundary answers 599); the
    ///   store's own errors (S3 unavailable: 503).
    func body(for object: StoredObject, range: Range<Int64>?, prime: Bool = true) async throws -> Response.Body {
        let wanted = range ?? 0..<object.fsize
        if wanted.isEmpty || object.segments.isEmpty { return .bytes([]) }
        let segments = object.segments
        let pieces = try Segment.pieces(of: wanted, in: segments)
        if let ranges = store as? any ByteRangeServing, pieces.count == 1,
            let file = try await BlockingWork.run({ [pieces] in try ranges.fileRange(of: pieces[0].0, range: pieces[0].1) })
        {
            return .file(descriptor: file.descriptor, offset: file.offset, length: file.length)
        }
        let reader = try SegmentReader(store: store, segments: segments, range: wanted)
        if Int64(wanted.count) <= Self.inMemoryLimit {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(wanted.count)
            while let piece = try await reader.next() { bytes += piece }
            return .bytes(bytes)
        }
        if prime { try await reader.prime() }
        return .stream(length: UInt64(wanted.count), source: StreamedDownload(reader: reader, context: RequestContext.current))
    }
}

/// A `SegmentReader` as the source of a streamed response body.
private struct StreamedDownload: ResponseBodySource {
    let reader: SegmentReader
    /// The download's request: the access-log line went out with the head (status 200), so a
    /// store failure that later cuts the body short is logged here, or nowhere.
    let context: RequestContext?

    func next() async throws -> [UInt8]? {
        do {
            return try await reader.next()
        } catch is CancellationError {
            throw CancellationError()  // the client went away, or the server is stopping
        } catch {
            context?.logger.error(
                "download cut short", ["reqid": .string(context?.requestID ?? ""), "reason": .string("\(error)")])
            throw error
        }
    }

    func cancel() { reader.cancel() }
}
