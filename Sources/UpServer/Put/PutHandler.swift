import Basics
import HTTPKit
import NativeCrypto
import UpCore

/// `POST /put/<fsize>[/key/<B64>][/mimeType/<B64>][/crc32/<n>][/x:<name>/<B64>]...`: a whole
/// file in one raw body (qiniu-protocol.md §4.5; optional, no Python SDK path uses it).
///
/// The body is streamed through `BlobWriter` into blobs of 4 MiB, hashed as it is written (never
/// held whole), so the object is a manifest of 4 MiB segments like an mkfile's.
/// `fsize` must equal the body length (400), a `crc32` segment must match (406, §7.3), and the
/// policy's `fsizeLimit` is checked against the declared size before reading (413). On any
/// failure the blobs written so far are removed; so are they when an insert-only upload of
/// identical content succeeds without storing them (the existing object is kept).
///
/// `POST /putb64/<fsize>/...` carries the file base64-encoded (standard or URL-safe alphabet,
/// padding optional, line breaks ignored; `fsize` is the decoded size). It cannot be hashed
/// while streaming without a streaming base64 decoder, so the route collects its body — it is
/// meant for small payloads and limited by ``PutController/maxPutB64Body``.
struct PutHandler: Sendable {
    let authorizer: UploadAuthorizer
    let ingest: BlobIngest
    let objects: any ObjectIndex
    let committer: ObjectCommitter
    let clock: any WallClock
    let metrics: UpMetrics
    let logger: Logger

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
        let writer = ingest.writer(BlobTarget(
            layout: .blocks, limit: path.fsize,
            overflow: UpError(.badRequest, detail: "put body longer than fsize \(path.fsize)"),
            crc32: path.crc32 != nil, etag: true))
        let witness = StoreWitness()
        do {
            let written = try await writer.writeAll(body)
            guard written.count == path.fsize else {
                throw UpError(.badRequest, detail: "put fsize \(path.fsize) but body has \(written.count) bytes")
            }
            if let expected = path.crc32, expected != written.crc32 {
                throw UpError(.crc32Mismatch, detail: "put crc32 \(expected), body \(written.crc32 ?? 0)")
            }
            metrics.bytesReceived.increment(by: Double(written.count))
            let commit = CommitRequest(
                token: token, clientKey: path.key, fname: path.fname, clientMimeType: path.mimeType,
                sniffedMimeType: MimeSniffer.sniff(written.head), customVariables: path.customVariables,
                metadata: path.metadata, etag: written.etag?.etag ?? "", fsize: written.count,
                segments: written.segments, kind: .singlePut, completionKey: nil)
            let objects = self.objects
            let result = try await committer.commit(commit) { object, mode, callback in
                let outcome = try await objects.putObject(object, mode: mode, completion: nil, callback: callback)
                witness.markStored()
                return outcome
            }
            // Identical content under an insert-only key succeeds without storing ours.
            if !witness.stored { await discard(writer) }
            return result.response
        } catch {
            if !witness.stored { await discard(writer) }
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

    /// Removes the blobs no object took; best effort (the orphan sweep finds what this misses).
    private func discard(_ writer: BlobWriter) async {
        if let error = await writer.abandon() {
            logger.warning("could not remove blobs of a failed put", ["error": .string("\(error)")])
        }
    }
}
