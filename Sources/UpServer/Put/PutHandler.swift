import Basics
import HTTPKit
import NativeCrypto
import UpCore

/// `POST /put/<fsize>[/key/<B64>][/mimeType/<B64>][/crc32/<n>][/x:<name>/<B64>]...`: a whole
/// file in one raw body (qiniu-protocol.md §4.5; optional, no Python SDK path uses it).
///
/// The body is streamed: hashed with `EtagHasher` and written into blobs of at most 4 MiB as it
/// arrives (never held whole), so the object is a manifest of 4 MiB segments like an mkfile's.
/// `fsize` must equal the body length (400), a `crc32` segment must match (406, §7.3), and the
/// policy's `fsizeLimit` is checked against the declared size before reading (413). On any
/// failure the blobs written so far are removed; so are they when an insert-only upload of
/// identical content succeeds without storing them (the existing object is kept).
///
/// `POST /putb64/<fsize>/...` carries the file base64-encoded (standard or URL-safe alphabet,
/// padding optional, line breaks ignored; `fsize` is the decoded size). It cannot be hashed
/// while streaming without a streaming base64 decoder, so the route collects its body — it is
/// meant for small payloads and limited by ``ResumableController/maxPutB64Body``.
struct PutHandler: Sendable {
    let authorizer: UploadAuthorizer
    let blobs: any BlockStore
    let objects: any ObjectIndex
    let committer: ObjectCommitter
    let clock: any WallClock
    let metrics: UpMetrics
    let logger: Logger

    /// The segments written so far, to keep or discard as a whole.
    private struct Written {
        var segments: [Segment] = []
        var etag = ""
        var sniffWindow: [UInt8] = []
    }

    /// Handles one request.
    func handle(_ request: Request) async throws -> Response {
        let now = clock.unixSeconds
        let token = try authorizer.authorize(header: request.headers["Authorization"], now: now)
        let path = try PutPath.parse(request.path)
        try token.policy.checkSize(path.fsize, isFinal: false)
        let body: RequestBodyStream
        if path.isBase64Body {
            body = RequestBodyStream(bytes: try Self.decodeBase64(request.body))
        } else {
            if let declared = request.declaredLength, declared != path.fsize {
                throw UpError(.badRequest, detail: "put fsize \(path.fsize), Content-Length \(declared)")
            }
            body = request.bodyStream
        }
        var blobs: [BlobID] = []
        do {
            let written = try await ingest(body, path: path, blobs: &blobs)
            let commit = CommitRequest(
                token: token, clientKey: path.key, fname: path.fname, clientMimeType: path.mimeType,
                sniffedMimeType: MimeSniffer.sniff(written.sniffWindow), customVariables: path.customVariables,
                metadata: path.metadata, etag: written.etag, fsize: path.fsize, segments: written.segments,
                kind: .singlePut, completionKey: nil)
            let objects = self.objects
            let result = try await committer.commit(commit, now: now) { object, mode, callback in
                try await objects.putObject(object, mode: mode, completion: nil, callback: callback)
            }
            if let first = blobs.first {
                // Identical content under an insert-only key succeeds without storing ours.
                let stored = try await objects.object(bucket: token.policy.bucket, key: result.key)
                if stored?.segments.contains(where: { $0.blob == first }) != true { await discard(blobs) }
            }
            return result.response
        } catch {
            await discard(blobs)
            throw error
        }
    }

    /// Decodes a `putb64` body: ASCII whitespace dropped, `+`/`/` read as `-`/`_`.
    ///
    /// - Throws: `UpError` 400 when the text is not base64.
    static func decodeBase64(_ text: [UInt8]) throws(UpError) -> [UInt8] {
        var normalized: [UInt8] = []
        normalized.reserveCapacity(text.count)
        for byte in text {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: continue
            case UInt8(ascii: "+"): normalized.append(UInt8(ascii: "-"))
            case UInt8(ascii: "/"): normalized.append(UInt8(ascii: "_"))
            default: normalized.append(byte)
            }
        }
        guard let bytes = URLSafeBase64.decode(bytes: normalized) else {
            throw UpError(.badRequest, detail: "putb64 body is not base64")
        }
        return bytes
    }

    /// Streams the body into 4 MiB blobs (appending every ``ChunkWriter/bufferLimit`` bytes),
    /// syncing each when full; `blobs` collects every blob created, for cleanup.
    private func ingest(_ body: RequestBodyStream, path: PutPath, blobs: inout [BlobID]) async throws -> Written {
        let blockSize = Int64(QiniuBlock.size)
        var hasher = EtagHasher()
        var crc = CRC32()
        var result = Written()
        var buffer: [UInt8] = []
        var current: (blob: BlobID, length: Int64)?
        var total: Int64 = 0
        for try await piece in body {
            total += Int64(piece.count)
            guard total <= path.fsize else {
                throw UpError(.badRequest, detail: "put body longer than fsize \(path.fsize)")
            }
            hasher.update(piece)
            crc.update(piece)
            if result.sniffWindow.count < MimeSniffer.windowSize {
                result.sniffWindow += piece.prefix(MimeSniffer.windowSize - result.sniffWindow.count)
            }
            var rest = piece[...]
            while !rest.isEmpty {
                if current == nil {
                    let store = self.blobs
                    let blob = try await BlockingWork.run { try store.create() }
                    blobs.append(blob)
                    current = (blob, 0)
                }
                guard var block = current else { break }
                let room = Int(blockSize - block.length) - buffer.count
                let take = min(room, rest.count)
                buffer.append(contentsOf: rest.prefix(take))
                rest = rest.dropFirst(take)
                if buffer.count >= ChunkWriter.bufferLimit || block.length + Int64(buffer.count) == blockSize {
                    block.length = try await append(buffer, to: block.blob, at: block.length)
                    buffer.removeAll(keepingCapacity: true)
                    current = block
                }
                if block.length == blockSize {
                    try await seal(block.blob)
                    result.segments.append(Segment(blob: block.blob, length: block.length))
                    current = nil
                }
            }
        }
        if var block = current {
            if !buffer.isEmpty { block.length = try await append(buffer, to: block.blob, at: block.length) }
            try await seal(block.blob)
            result.segments.append(Segment(blob: block.blob, length: block.length))
        }
        guard total == path.fsize else {
            throw UpError(.badRequest, detail: "put fsize \(path.fsize) but body has \(total) bytes")
        }
        if let expected = path.crc32, expected != crc.value {
            throw UpError(.crc32Mismatch, detail: "put crc32 \(expected), body \(crc.value)")
        }
        metrics.bytesReceived.increment(by: Double(total))
        result.etag = hasher.finalize().etag
        return result
    }

    private func append(_ bytes: [UInt8], to blob: BlobID, at offset: Int64) async throws -> Int64 {
        let store = blobs
        return try await BlockingWork.run { try store.append(bytes, to: blob, at: offset) }
    }

    /// DESIGN.md: a block's bytes are fsynced when it is complete, before the object names it.
    private func seal(_ blob: BlobID) async throws {
        let store = blobs
        try await BlockingWork.run { try store.sync(blob) }
    }

    /// Removes blobs no object took; best effort (the orphan sweep finds what this misses).
    private func discard(_ blobs: [BlobID]) async {
        guard !blobs.isEmpty else { return }
        let store = self.blobs
        do {
            try await BlockingWork.run { for blob in blobs { try store.remove(blob) } }
        } catch {
            logger.warning("could not remove blobs of a failed put", ["count": .int(Int64(blobs.count))])
        }
    }
}
