import HTTPTransport
import NativeCrypto
import UpCore

/// Carries out ``MultipartUpload``'s actions (qiniu-protocol.md §5). A part of at most 4 MiB (the
/// default) is read once into the buffer it is sent from, and its MD5 (`Content-MD5`) and part
/// digest (§7.2, for the local hash) are computed from that buffer. A larger part is hashed in
/// one pass and then streamed from the file, memory staying bounded; the server checks the
/// `Content-MD5`, so a part whose bytes changed between the pass and the send is refused (400)
/// rather than stored under a digest that does not describe it. A 612 starts the upload over
/// with a new upload id; replies for a dropped id are ignored.
struct V2Uploader: Sendable {
    let job: UploadJob

    private struct Outcome: Sendable {
        var uploadID: String
        var event: MultipartUpload.Event
        var progressID: Int
    }

    /// Uploads every missing part and completes; returns the complete reply. On abort, the
    /// upload id is aborted on the server before the error is thrown.
    func run(_ initial: MultipartUpload) async throws(UploadError) -> UploadJob.Completion {
        var machine = initial
        report(machine)
        do {
            return try await withThrowingTaskGroup(of: Outcome?.self) { group in
                while true {
                    switch machine.nextAction() {
                    case .initiate:
                        let (id, expiry) = try await initiate()
                        machine.handle(.initiated(uploadID: id, expiresAt: expiry))
                        try save(machine)
                    case .putPart(let id, let number, let range):
                        group.addTask { try await putPart(uploadID: id, number: number, range: range) }
                        report(machine)
                    case .wait:
                        guard let next = try await group.next(), let outcome = next else { continue }
                        job.reporter.end(outcome.progressID)
                        guard outcome.uploadID == machine.uploadID else { continue }
                        machine.handle(outcome.event)
                        if case .partAccepted = outcome.event { try save(machine) }
                        report(machine)
                    case .complete(let id, let parts):
                        guard let etag = machine.etag else { throw UploadError(.integrity, "v2: a part without its digest") }
                        switch try await complete(uploadID: id, parts: parts) {
                        case .success(let response):
                            machine.handle(.completed)
                            return UploadJob.Completion(response: response, localEtag: etag, callbackFailed: false)
                        case .storedCallbackFailed(let response):
                            machine.handle(.completed)
                            return UploadJob.Completion(response: response, localEtag: etag, callbackFailed: true)
                        case .stale:
                            machine.handle(.uploadExpired)
                            report(machine)
                        }
                    case .finished:
                        throw UploadError(.integrity, "v2 state machine finished without a reply")
                    case .failed(let number, let reason):
                        throw UploadError(.integrity, number == 0 ? reason : "part \(number): \(reason)")
                    }
                }
            }
        } catch {
            let failure = (error as? UploadError) ?? job.sender.stopError()
            // Nothing will complete this upload id: free its parts on the server now.
            let abandoned = failure.kind == .aborted || failure.kind == .fileChanged || job.watch.change != nil
            if abandoned, let id = machine.uploadID { await abort(uploadID: id) }
            throw failure
        }
    }

    private func save(_ machine: MultipartUpload) throws(UploadError) {
        let (id, expiry, parts) = (machine.uploadID, machine.expiresAt, machine.sortedParts)
        try job.save { checkpoint in
            checkpoint.uploadID = id
            checkpoint.uploadExpiresAt = expiry
            checkpoint.parts = parts
        }
    }

    private func report(_ machine: MultipartUpload) {
        let states = (1...machine.partCount).map { number -> UploadProgress.BlockState in
            if machine.parts[number] != nil { return .done }
            return machine.isInFlight(number) ? .uploading : .pending
        }
        job.reporter.update(acknowledged: machine.acknowledgedBytes, blocks: states)
    }

    private func path(_ resource: MultipartPath.Resource) -> String {
        MultipartPath(bucket: job.bucket, key: job.request.key, resource: resource).path
    }

    private func initiate() async throws(UploadError) -> (String, Int64) {
        let path = path(.uploads)
        let job = self.job
        let outcome = try await job.sender.send { host, token in
            job.upRequest(method: "POST", host: host, path: path, token: token, contentType: nil, body: .none)
        }
        guard case .success(let response) = outcome else {
            throw UploadError(.server(status: 612), "v2 init answered 612")
        }
        let json = try UploadJob.json(response, "v2 init")
        guard let id = json["uploadId"]?.stringValue, !id.isEmpty, let expiry = json["expireAt"]?.int64Value, expiry > 0
        else { throw UploadError(.server(status: response.status), "v2 init reply without uploadId / expireAt") }
        return (id, expiry)
    }

    private func putPart(uploadID: String, number: Int, range: Range<Int64>) async throws -> Outcome? {
        let (body, md5, digest) = try Self.hashedBody(job.source, range: range)
        defer { if case .bytes(let bytes) = body { job.source.recycle(bytes) } }
        let path = path(.part(uploadID: uploadID, partNumber: number))
        let progressID = job.reporter.begin()
        let job = self.job
        let outcome = try await job.sender.send(payload: Int64(range.count)) { host, token in
            job.upRequest(
                method: "PUT", host: host, path: path, token: token, contentType: "application/octet-stream",
                extraHeaders: [("Content-MD5", md5)], body: body, progressID: progressID)
        }
        switch outcome {
        case .stale:
            return Outcome(uploadID: uploadID, event: .uploadExpired, progressID: progressID)
        case .storedCallbackFailed(let response):
            throw RequestSender.serverError(response, request: TransportRequest(method: "PUT", url: path))
        case .success(let response):
            let json = try UploadJob.json(response, "v2 part")
            guard let etag = json["etag"]?.stringValue else {
                throw UploadError(.server(status: response.status), "v2 part reply without etag")
            }
            if let replyMD5 = json["md5"]?.stringValue, replyMD5.lowercased() != md5 {
                return Outcome(uploadID: uploadID, event: .partFailed(number: number, retryable: true), progressID: progressID)
            }
            return Outcome(uploadID: uploadID, event: .partAccepted(number: number, etag: etag, digest: digest), progressID: progressID)
        }
    }

    /// The body of the part in `range`, its lower-case hex MD5 and its part digest (§7.2), from
    /// one read of the file: the bytes themselves up to ``SourceFile/pieceSize``, else the
    /// file region (hashed piece by piece first). MD5 and SHA-1 go over the bytes together
    /// (``HashSlices``).
    static func hashedBody(_ source: SourceFile, range: Range<Int64>) throws(UploadError) -> (TransportBody, String, [UInt8]) {
        var md5 = Digest(.md5)
        var etag = EtagHasher()
        let length = Int64(range.count)
        if length <= Int64(SourceFile.pieceSize) {
            let bytes = try source.read(offset: range.lowerBound, length: Int(length))
            HashSlices.forEach(bytes) { slice in
                md5.update(slice)
                etag.update(slice)
            }
            return (.bytes(bytes), Hex.encode(md5.finalize()), etag.finalize().partDigest)
        }
        try source.forEachPiece(offset: range.lowerBound, length: length) { piece in
            HashSlices.forEach(piece) { slice in
                md5.update(slice)
                etag.update(slice)
            }
        }
        return (.file(path: source.path, offset: range.lowerBound, length: length), Hex.encode(md5.finalize()), etag.finalize().partDigest)
    }

    private func complete(uploadID: String, parts: [MultipartUpload.Part]) async throws(UploadError) -> RequestSender.Outcome {
        let request = job.request
        let body = CompleteMultipartRequest(
            parts: parts.map { .init(etag: $0.etag, partNumber: $0.number) }, fname: request.resolvedFname,
            mimeType: request.mimeType, customVariables: request.sortedVariables, metadata: request.sortedMetadata
        ).serialized()
        let path = path(.upload(id: uploadID))
        let job = self.job
        return try await job.sender.send(completes: true) { host, token in
            job.upRequest(
                method: "POST", host: host, path: path, token: token, contentType: "application/json",
                body: .bytes(Array(body.utf8)))
        }
    }

    /// Best-effort `DELETE …/uploads/<id>` in a task of its own (the upload's task is cancelled).
    func abort(uploadID: String) async {
        let path = path(.upload(id: uploadID))
        let job = self.job
        await Task {
            _ = try? await job.sender.sendIgnoringStop { host, token in
                job.upRequest(method: "DELETE", host: host, path: path, token: token, contentType: nil, body: .none)
            }
        }.value
    }
}
