import Basics
import HTTPKit
import UpCore

extension MultipartController {
    /// `PUT …/uploads/<id>/<partNumber>` (qiniu-protocol.md §5 upload part):
    /// `200 {"etag":"<part etag>","md5":"<hex md5>"}`.
    ///
    /// The part `etag` is the part's own v1 etag (§7.1 qetag of the part bytes, `F…`/`l…`, 28
    /// characters) — the shape Qiniu's documentation shows for part etags, derived from the
    /// content, and safe in the complete JSON. `md5` is always present: the SDK's legacy v2 path
    /// does `del ret['md5']` (§5).
    ///
    /// The body streams into a fresh blob while MD5 and the per-4-MiB SHA-1s are computed, so the
    /// object hash at complete needs no re-read (§7.2). Size limits (→ 413): 1 GiB per part, and
    /// the policy's `fsizeLimit` over this part plus the other stored parts (§1.3: "check at
    /// mkblk/part time too (cumulative)"). The part size *minimum* is only checked at complete (§5).
    func uploadPart(_ request: Request, path: MultipartPath, uploadID: String, partNumber: Int) async throws -> Response {
        let now = clock.unixSeconds
        let policy = try authorize(request, path: path, now: now).policy
        let expectedMD5 = try ContentMD5.parse(request.headers["Content-MD5"])
        _ = try await activeUpload(uploadID, path: path, now: now)

        // Bytes of the other parts count against fsizeLimit; a re-upload replaces its own number.
        let others = try await storedParts(uploadID).values.reduce(Int64(0)) {
            $1.partNumber == partNumber ? $0 : $0 + $1.size
        }
        func checkTotal(_ partBytes: Int64) throws(UpError) {
            guard partBytes <= Self.maxPartSize else {
                throw UpError(.fileTooLarge, detail: "part of \(partBytes) bytes > 1 GiB")
            }
            try policy.checkSize(others + partBytes, isFinal: false)
        }
        // Refuse an announced oversize body before reading it.
        if let length = request.declaredLength { try checkTotal(length) }

        let store = blobs
        let writer = try await BlockingWork.run { try PartWriter.create(in: store) }
        do {
            var batch: [UInt8] = []
            var received: Int64 = 0
            for try await piece in request.bodyStream {
                received += Int64(piece.count)
                try checkTotal(received)
                batch.append(contentsOf: piece)
                if batch.count >= PartWriter.batchSize {
                    let full = batch
                    batch.removeAll(keepingCapacity: true)
                    try await BlockingWork.run { try writer.write(full) }
                }
            }
            let last = batch
            let summary = try await BlockingWork.run {
                try writer.write(last)
                return try writer.finish()
            }
            // Appendix A.7: a Content-MD5 mismatch is 400.
            if let expectedMD5, expectedMD5 != summary.md5Bytes {
                throw UpError(.contentMD5Mismatch, detail: "part \(partNumber) of \(uploadID)")
            }
            let part = UploadPart(
                uploadID: uploadID, partNumber: partNumber, blob: writer.blob, size: summary.size, md5: summary.md5,
                etag: summary.etag, digest: summary.digest, putTime: clock.unixSeconds)
            // The index re-checks that the upload is still usable (it may have been completed,
            // aborted or expired while the body streamed) and replaces an earlier same-numbered part.
            let replaced: BlobID?
            do {
                replaced = try await uploads.putPart(part, now: clock.unixSeconds)
            } catch UpIndexError.noSuchUpload {
                throw UpError(.noSuchUploadID, detail: uploadID)
            }
            if let replaced { await remove([replaced]) }
            metrics.bytesReceived.increment(by: Double(summary.size))
            metrics.chunks.increment()
            return Self.reply(.object([("etag", .string(summary.etag)), ("md5", .string(summary.md5))]))
        } catch {
            _ = try? await BlockingWork.run { writer.discard() }
            throw error
        }
    }

    /// Every stored part of the upload by number (listed in pages of 1000; at most 10 pages).
    func storedParts(_ uploadID: String) async throws -> [Int: UploadPart] {
        var parts: [Int: UploadPart] = [:]
        var marker = 0
        repeat {
            let page = try await uploads.listParts(uploadID: uploadID, marker: marker, max: Self.maxListedParts)
            for part in page.parts { parts[part.partNumber] = part }
            marker = page.nextMarker
        } while marker != 0
        return parts
    }
}
