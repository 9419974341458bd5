import Basics
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
    /// transaction that marks the upload completed (`MultipartIndex.completeUpload`).
    ///
    /// A repeat of a finished complete with the same key and parts list returns the first answer,
    /// also after a restart: the complete stores a completion record with the object, as mkfile
    /// does (DESIGN.md "mkfile is idempotent"). The spec makes a completed uploadId invalid (§5 →
    /// 612), but a client whose connection dropped before the reply, or whose up-server was killed
    /// during the callback, would then re-upload a file that is stored. Any other use of a
    /// completed or expired id is still 612.
    func complete(_ request: Request, path: MultipartPath, uploadID: String) async throws -> Response {
        let now = clock.unixSeconds
        let token = try authorize(request, path: path, now: now)
        let body = try CompleteMultipartRequest.parse(request.body)

        guard let upload = try await uploads.upload(id: uploadID), Self.isBound(upload, to: path) else {
            throw UpError(.noSuchUploadID, detail: uploadID)
        }
        let completion = NewCompletion(
            key: CompletionKey.multipartComplete(
                bucket: upload.bucket, uploadID: uploadID, key: path.key,
                parts: body.parts.map { ($0.partNumber, $0.etag) }),
            expiresAt: max(upload.expiresAt, now))
        guard upload.isUsable(now: now) else {
            return try await repeatComplete(
                completion.key, token: token, path: path, body: body, reason: "\(uploadID) is \(upload.state.rawValue)", now: now)
        }

        let parts = try Self.select(body.parts, from: try await storedParts(uploadID))
        let fsize = parts.reduce(Int64(0)) { $0 + $1.size }
        let etag = Etag.v2(parts: parts.map { Etag.Part(digest: $0.digest, size: $0.size) })
        let sniffed = await sniff(
            parts[0].segment, recorded: parts[0].sniffedType, policy: token.policy, fname: body.fname,
            mimeType: body.mimeType, key: path.key)

        var commit = CommitRequest(
            token: token, clientKey: path.key, fname: body.fname, clientMimeType: body.mimeType,
            sniffedMimeType: sniffed, etag: etag, fsize: fsize, segments: parts.map(\.segment), kind: .multipartV2,
            completionKey: completion.key)
        commit.customVariables = body.customVariables
        commit.metadata = body.metadata

        let references = parts.map { PartReference(partNumber: $0.partNumber, etag: $0.etag) }
        let sameContentExisted = Mutex(false)
        let uploads = self.uploads
        let result: CommitResult
        do {
            result = try await committer.commit(commit) { object, mode, callback in
                do {
                    return try await uploads.completeUpload(
                        uploadID, parts: references, object: object, mode: mode, completion: completion,
                        callback: callback, now: now)
                } catch UpIndexError.objectExists {
                    // The committer answers success if the key already holds identical content;
                    // then this upload's parts are not used and we retire it below.
                    sameContentExisted.withLock { $0 = true }
                    throw UpIndexError.objectExists
                }
            }
        } catch let error as UpIndexError {
            throw Self.translate(error, uploadID: uploadID)
        }
        if sameContentExisted.withLock({ $0 }) {
            await retire(uploadID, completion: completion, etag: etag, result: result)
        }
        return result.response
    }

    /// A complete for an upload that is no longer active: the first answer if this exact request
    /// (key and parts list) completed it, else 612.
    ///
    /// With no first answer recorded (the first attempt answered 579, or up-server died before
    /// the callback reply was recorded), the committer tries the callback again, as for a repeated
    /// mkfile: the object as stored supplies etag, size, type and segments, since the parts rows
    /// are gone.
    private func repeatComplete(
        _ key: CompletionKey, token: UpToken, path: MultipartPath, body: CompleteMultipartRequest, reason: String,
        now: Int64
    ) async throws -> Response {
        let objects = committer.objects
        // The record outlives expireAt until the sweeper runs; past it the spec's 612 holds.
        guard let completion = try await objects.completion(key), completion.expiresAt > now else {
            throw UpError(.noSuchUploadID, detail: "\(reason), or completed with another parts list")
        }
        if let result = completion.result {
            return CommitResult.stored(key: completion.objectKey, reply: Array(result.utf8)).response
        }
        guard let object = try await objects.object(bucket: key.bucket, key: completion.objectKey),
            object.etag.utf8.elementsEqual(completion.etag.utf8)
        else { throw UpError(.noSuchUploadID, detail: "\(reason); its object has since been replaced or deleted") }
        var commit = CommitRequest(
            token: token, clientKey: path.key, fname: body.fname, clientMimeType: object.mimeType,
            sniffedMimeType: await sniff(
                object.segments.first, recorded: nil, policy: token.policy, fname: body.fname, mimeType: object.mimeType,
                key: path.key),
            etag: object.etag, fsize: object.fsize,
            segments: object.segments, kind: .multipartV2, completionKey: key)
        commit.customVariables = body.customVariables
        commit.metadata = body.metadata
        let result = try await committer.commit(commit) { _, _, _ in .alreadyCompleted(completion) }
        return result.response
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

    /// The MIME type the first segment's first 512 bytes show (§1.3 detectMime / mimeLimit), only
    /// when `policy` and the names the client gave leave it a say
    /// (`MimeResolution.needsSniffedType`; nil otherwise): what the part's upload `recorded`
    /// (`UploadPart.sniffedType`), else read back.
    ///
    /// `nil` if unreadable: a concurrent re-upload of part 1 may just have removed its blob, and
    /// then `completeUpload` refuses the stale segment list anyway.
    private func sniff(
        _ first: Segment?, recorded: String??, policy: PutPolicy, fname: String?, mimeType: String?, key: String?
    ) async -> String? {
        guard policy.needsSniffedType(clientMimeType: mimeType, fname: fname, key: key), let first else { return nil }
        return try? await ingest.store.sniffedType(of: first, recorded: recorded)
    }

    /// Ends an upload whose object already existed with the same content, freeing its parts and
    /// recording this complete's answer, so that its repeat (a lost reply) gets the answer again
    /// rather than 612. A 579 is recorded without an answer: the repeat tries the callback again.
    private func retire(_ uploadID: String, completion: NewCompletion, etag: String, result: CommitResult) async {
        let (objectKey, answer): (String, String?) = switch result {
        case .stored(let key, let reply): (key, String(decoding: reply, as: UTF8.self))
        case .callbackFailed(let key, _): (key, nil)
        }
        let record = Completion(
            key: completion.key, objectKey: objectKey, etag: etag, result: answer, expiresAt: completion.expiresAt)
        // Failing here loses nothing stored: the upload stays active until it expires and is swept.
        guard let released = try? await uploads.retireUpload(uploadID, recording: record) else { return }
        await remove(released)
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
}
