import Basics
import HTTPKit
import Synchronization
import UpCore

/// `POST /`: the form upload (qiniu-protocol.md §6).
///
/// The body is streamed: multipart events from ``MultipartFormParser`` feed a
/// ``FormUploadReader``, which authorizes the token when the file part begins and writes the file
/// into 4 MiB blobs as it arrives (never the whole file in memory). Once the body is complete the
/// optional `crc32` field is checked (406), the token's deadline is checked again (§1.2: the
/// deadline is the time the object is *created*), and ``ObjectCommitter`` applies the policy and
/// stores the object. Blobs written for an upload that does not become an object are removed.
struct FormUploadController: Sendable {
    /// Largest form body, bytes (413 past it). Bigger files belong to the resumable protocols
    /// (§4, §5), which every SDK switches to well below this.
    static let maxBodyBytes = 1 << 30
    /// Largest piece fed to the parser at once: bounds the parser's buffer even when a caller
    /// (in-process tests) hands over the body as one big piece.
    static let feedSize = 256 * 1024
    /// Handler deadline: the whole body must arrive within it (the server default of 30 s would
    /// cut off a 1 GiB form on anything slower than ~35 MB/s). 30 minutes ≈ 600 KB/s for the
    /// largest body. It is also the longest a stalled client can hold the request open.
    static let timeout = Duration.seconds(30 * 60)

    let authorizer: UploadAuthorizer
    let ingest: BlobIngest
    let objects: any ObjectIndex
    let committer: ObjectCommitter
    let clock: any WallClock
    let metrics: UpMetrics

    /// Adds `POST /`.
    func register(on router: inout UpRouter) {
        router.post("/", body: .stream(maxBytes: Self.maxBodyBytes), timeout: Self.timeout) { request, context in
            try await upload(request, context: context)
        }
    }

    /// Handles one form upload.
    func upload(_ request: Request, context: RequestContext) async throws -> Response {
        // §6: multipart/form-data with a boundary, else 400.
        guard let contentType = request.headers["Content-Type"],
            let boundary = MultipartFormParser.boundary(fromContentType: contentType)
        else { throw UpError(.notMultipartForm) }
        var parser = try MultipartFormParser(boundary: boundary)
        let reader = FormUploadReader(
            authorizer: authorizer, ingest: ingest, clock: clock, metrics: metrics,
            declaredLength: request.declaredLength)
        let witness = StoreWitness()
        do {
            for try await piece in request.bodyStream {
                var start = 0
                while start < piece.count {
                    let end = min(start + Self.feedSize, piece.count)
                    try await reader.consume(parser.feed(start == 0 && end == piece.count ? piece : Array(piece[start..<end])))
                    start = end
                }
            }
            try parser.finish()
            let upload = try reader.finish()
            let file = try await upload.writer.finish()
            try check(file, upload: upload)
            let result = try await commit(file, upload: upload, witness: witness)
            metrics.bytesReceived.increment(by: Double(file.count))
            if !witness.stored {
                // Same content already under an insert-only key (§1.3): success, but our copy is unused.
                await discard(reader.file, context: context)
            }
            return Self.response(for: result, policy: upload.token.policy, fields: upload.fields)
        } catch {
            if !witness.stored { await discard(reader.file, context: context) }
            throw error
        }
    }

    /// The checks between the last byte and the commit.
    private func check(_ file: BlobWritten, upload: FormUploadReader.Upload) throws {
        // §6 / §7.3: the optional `crc32` field is the unsigned CRC-32 of the file; mismatch → 406.
        if let expected = try upload.fields.expectedCRC32(), expected != file.crc32 {
            throw UpError(.crc32Mismatch, detail: "form crc32 \(expected) != \(file.crc32 ?? 0)")
        }
        // §1.2 step 3: the deadline bounds the object's creation, so a token that expired while
        // the body was arriving is refused here too.
        if clock.unixSeconds > upload.token.policy.deadline {
            throw UpError(.expiredToken, detail: "expired during the form upload")
        }
    }

    /// Hands the file to the committer; `witness` records whether our object was written.
    private func commit(
        _ file: BlobWritten, upload: FormUploadReader.Upload, witness: StoreWitness
    ) async throws -> CommitResult {
        let fields = upload.fields
        // fname: the explicit `fname` field, else the file part's filename (§2 `fname`, §6).
        let fname = [fields.fname, upload.file.filename].compactMap { $0 }.first { !$0.isEmpty }
        let request = CommitRequest(
            token: upload.token, clientKey: fields.key, fname: fname, clientMimeType: upload.file.contentType,
            sniffedMimeType: MimeSniffer.sniff(file.head), customVariables: fields.customVariables,
            metadata: fields.metadata, etag: file.etag?.etag ?? "", fsize: file.count, segments: file.segments,
            kind: .form)
        let objects = self.objects
        return try await committer.commit(request) { object, mode, callback in
            let outcome = try await objects.putObject(object, mode: mode, completion: nil, callback: callback)
            witness.markStored()
            return outcome
        }
    }

    /// Removes the file's blobs, logging (not throwing) a failure: the orphan sweep retries.
    private func discard(_ file: BlobWriter?, context: RequestContext) async {
        if let error = await file?.abandon() {
            context.logger.warning("could not remove form upload blobs", ["error": .string("\(error)")])
        }
    }

    /// The answer to a committed upload (§6, §3.4, §3.6).
    ///
    /// * `returnUrl` (form only, and only without a callback — with one, the callback's answer is
    ///   the reply) → `303 See Other` to `returnUrl?upload_ret=<B64(reply)>`. When `returnUrl`
    ///   already has a query, `&upload_ret=` is appended instead (our choice: keeps the URL valid);
    ///   a `#fragment` stays at the end.
    /// * otherwise `200` with the reply, `Content-Type` = the `accept` field if given (old-IE
    ///   trick), else `application/json`.
    /// * `579 {"error": reason}` when the callback failed; the object is stored (§3.4).
    static func response(for result: CommitResult, policy: PutPolicy, fields: FormFields) -> Response {
        switch result {
        case .stored(_, let reply):
            if let location = redirect(policy: policy, reply: reply) {
                return Response(status: 303, headers: ["Location": location, "Cache-Control": "no-store"])
            }
            return Response(
                status: 200,
                headers: ["Content-Type": fields.acceptedContentType ?? "application/json", "Cache-Control": "no-store"],
                body: reply)
        case .callbackFailed(_, let reason):
            return Response.error(status: 579, message: reason, headers: ["Cache-Control": "no-store"])
        }
    }

    /// The 303 target for `returnUrl`, or `nil` when there is none (or a callback is configured,
    /// or the URL holds control characters that cannot go into a header).
    static func redirect(policy: PutPolicy, reply: [UInt8]) -> String? {
        guard let returnUrl = policy.returnUrl, !returnUrl.isEmpty, (policy.callbackUrl ?? "").isEmpty,
            returnUrl.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F })
        else { return nil }
        var base = Substring(returnUrl)
        var fragment: Substring = ""
        if let hash = base.firstIndex(of: "#") {
            fragment = base[hash...]
            base = base[..<hash]
        }
        let separator = base.contains("?") ? "&" : "?"
        return base + separator + "upload_ret=" + URLSafeBase64.encode(reply) + fragment
    }
}
