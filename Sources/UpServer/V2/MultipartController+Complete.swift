import HTTPKit
import Synchronization
import UpCore

extension MultipartController {
    /// `POST …/uploads/<id>` (qiniu-protocol.md §5 complete): the form-upload answer (200 with
    /// returnBody / callback reply / `{"hash","key"}`, or 579).
    ///
    /// Checks, in order: token (a fresh one is fine, §1.2), JSON body, upload active and bound to
    /// the path (612), every (partNumber, etag) stored (400), part sizes — all but the last
    /// 1 MiB…1 GiB, the last ≤ 1 GiB (400, §5: "checked at complete"). The hash is the v1 etag for
    /// the 4 MiB layout, else the v2 hash (§7.2, `Etag.v2(parts:)`) from the digests stored with the
    /// parts. The committer applies the policy and writes object + callback in the same
    /// transaction that marks the upload completed (`UpIndex.completeUpload`).
    ///
    /// A repeat of a finished complete with the same parts list returns the first answer
    /// (DESIGN.md; see `CompletedUploads` for its limits); any other use of a completed id is 612.
    func complete(_ request: Request, path: MultipartPath, uploadID: String) async throws -> Response {
        let now = services.now
        let token = try authorize(request, path: path, now: now)
        let body = try CompleteMultipartRequest.parse(request.body)

        guard let upload = try await services.index.upload(id: uploadID), Self.isBound(upload, to: path) else {
            throw UpError(.noSuchUploadID, detail: uploadID)
        }
        guard upload.isUsable(now: now) else {
            if let first = completed.result(for: uploadID, bucket: path.bucket, key: path.key, parts: body.parts, now: now) {
                return Self.response(first)
            }
            throw UpError(.noSuchUploadID, detail: "\(uploadID) is \(upload.state.rawValue) or expired")
        }

        let parts = try Self.select(body.parts, from: try await storedParts(uploadID))
        let fsize = parts.reduce(Int64(0)) { $0 + $1.size }
        let etag = Etag.v2(parts: parts.map { Etag.Part(digest: $0.digest, size: $0.size) })
        let sniffed = await sniff(parts[0])

        var commit = CommitRequest(
            token: token, clientKey: path.key, fname: body.fname, clientMimeType: body.mimeType,
            sniffedMimeType: sniffed, etag: etag, fsize: fsize, segments: parts.map(\.segment), protocolName: "v2")
        commit.customVariables = body.customVariables
        commit.metadata = body.metadata

        let references = parts.map { PartReference(partNumber: $0.partNumber, etag: $0.etag) }
        let sameContentExisted = Mutex(false)
        let index = services.index
        let result: CommitResult
        do {
            result = try await services.committer.commit(commit, now: now) { object, mode, callback in
                do {
                    return try await index.completeUpload(
                        uploadID, parts: references, object: object, mode: mode, callback: callback, now: now)
                } catch UpIndexError.objectExists {
                    // The committer answers success if the key already holds identical content;
                    // then this upload's parts are not used and we abort it below.
                    sameContentExisted.withLock { $0 = true }
                    throw UpIndexError.objectExists
                }
            }
        } catch let error as UpIndexError {
            throw Self.translate(error, uploadID: uploadID)
        }
        if sameContentExisted.withLock({ $0 }) { await release(uploadID) }
        completed.remember(
            uploadID,
            CompletedUploads.Entry(
                bucket: upload.bucket, key: upload.key, parts: body.parts, result: result, expiresAt: upload.expiresAt),
            now: now)
        return Self.response(result)
    }

    /// The stored parts `references` name, in order, checked against §5's rules.
    ///
    /// - Throws: `400` for a missing part or another etag (§5: "every (partNumber, etag) must
    ///   match"), or a part outside the size rule.
    static func select(
        _ references: [CompleteMultipartRequest.Part], from stored: [Int: UploadPart]
    ) throws(UpError) -> [UploadPart] {
        var parts: [UploadPart] = []
        parts.reserveCapacity(references.count)
        for (position, reference) in references.enumerated() {
            guard let part = stored[reference.partNumber], part.etag.utf8.elementsEqual(reference.etag.utf8) else {
                throw UpError(.badRequest, detail: "part \(reference.partNumber): not uploaded or etag differs")
            }
            let isLast = position == references.count - 1
            guard part.size <= maxPartSize, isLast || part.size >= minPartSize else {
                throw UpError(.badRequest, detail: "part \(reference.partNumber) has \(part.size) bytes, outside 1 MiB…1 GiB")
            }
            parts.append(part)
        }
        return parts
    }

    /// The MIME type the first part's first 512 bytes show (§1.3 detectMime / mimeLimit).
    ///
    /// `nil` if unreadable: a concurrent re-upload of part 1 may just have removed its blob, and
    /// then `completeUpload` refuses the stale segment list anyway.
    private func sniff(_ first: UploadPart) async -> String? {
        let store = services.store
        let length = min(Int64(MimeSniffer.windowSize), first.size)
        guard length > 0 else { return nil }
        let bytes = try? await BlockingWork.run { try store.read(first.blob, range: 0..<length) }
        return bytes.flatMap { MimeSniffer.sniff($0) }
    }

    /// Aborts an upload whose object already existed with the same content, freeing its parts.
    private func release(_ uploadID: String) async {
        guard let blobs = try? await services.index.abortUpload(uploadID) else { return }
        await remove(blobs)
    }

    /// The index's refusals as the protocol's errors.
    static func translate(_ error: UpIndexError, uploadID: String) -> any Error {
        switch error {
        case .noSuchUpload: UpError(.noSuchUploadID, detail: uploadID)
        case .partMismatch(let number): UpError(.badRequest, detail: "part \(number) does not match")
        case .objectExists: UpError(.fileExists, detail: uploadID)
        // A part was re-uploaded between reading the parts and the write: the segment list is stale.
        case .invalidArgument(let reason): UpError(.badRequest, detail: reason)
        case .notFound: UpError(.noSuchUploadID, detail: uploadID)
        }
    }

    /// 200 with the reply, or 579 with the callback failure (§3.4); both `Cache-Control: no-store`.
    static func response(_ result: CommitResult) -> Response {
        switch result {
        case .stored(_, let reply):
            Response.json(raw: reply, headers: ["Cache-Control": "no-store"])
        case .callbackFailed(_, let reason):
            Response.error(status: 579, message: reason, headers: ["Cache-Control": "no-store"])
        }
    }
}
