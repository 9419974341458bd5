import Basics
import NativeCrypto
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
    /// The body streams into a fresh blob through `BlobWriter`, which computes MD5 and the
    /// per-4-MiB SHA-1s as it writes, so the object hash at complete needs no re-read (§7.2). Size limits (→ 413): 1 GiB per part, and
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

        let limit = min(Self.maxPartSize, policy.fsizeLimit.map { max(0, $0 - others) } ?? .max)
        let writer = ingest.writer(BlobTarget(
            layout: .oneBlob, limit: limit,
            overflow: UpError(.fileTooLarge, detail: "part over 1 GiB or past fsizeLimit with the other parts"),
            md5: true, etag: true, expectedBytes: request.declaredLength))
        do {
            let written = try await writer.writeAll(request.bodyStream)
            let md5 = written.md5 ?? []
            let etag = written.etag?.etag ?? ""
            // Appendix A.7: a Content-MD5 mismatch is 400.
            if let expectedMD5, expectedMD5 != md5 {
                throw UpError(.contentMD5Mismatch, detail: "part \(partNumber) of \(uploadID)")
            }
            guard let segment = written.segments.first else {
                throw UpError(.internalError, detail: "part \(partNumber) of \(uploadID) has no blob")
            }
            let part = UploadPart(
                uploadID: uploadID, partNumber: partNumber, blob: segment.blob, size: written.count, md5: Hex.encode(md5),
                etag: etag, digest: written.etag?.partDigest ?? [], putTime: clock.unixSeconds,
                sniffedType: written.sniffedType(startingBlobOf: written.count))
            // The index re-checks that the upload is still usable (it may have been completed,
            // aborted or expired while the body streamed) and replaces an earlier same-numbered part.
            let replaced: BlobID?
            do {
                replaced = try await uploads.putPart(part, now: clock.unixSeconds)
            } catch UpIndexError.noSuchUpload {
                throw UpError(.noSuchUploadID, detail: uploadID)
            }
            if let replaced { await remove([replaced]) }
            metrics.bytesReceived.increment(by: Double(written.count))
            metrics.chunks.increment()
            return Self.reply(.object([("etag", .string(etag)), ("md5", .string(part.md5))]))
        } catch {
            // The part's blob belongs to no row yet; best effort (the orphan sweep finds leftovers).
            await writer.abandon()
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
