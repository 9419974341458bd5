import HTTPTransport
import NativeCrypto
import UpCore

/// Carries out ``ResumableUpload``'s actions (qiniu-protocol.md §4). Each chunk is read from the
/// file once, into the buffer the request is sent from; its CRC-32 (for the reply's `crc32`) and
/// the block's SHA-1 (for the etag, ``BlockHashes``; kept once accepted) are computed from that
/// same buffer — in one pass before sending when the chunk is a whole block — so the local etag
/// is the etag of what was sent. Memory stays bounded by concurrency ×
/// chunk size. A reply whose crc32 differs makes the chunk go again (never skipped, unlike the
/// Python SDK §9.5); a 701 redoes the block.
struct V1Uploader: Sendable {
    let job: UploadJob
    private let hashes = BlockHashes()

    init(job: UploadJob) {
        self.job = job
    }

    private enum Outcome: Sendable {
        case event(ResumableUpload.Event, progressID: Int)
    }

    /// Uploads every missing chunk, then makes the file; returns the mkfile reply.
    func run(_ initial: ResumableUpload) async throws(UploadError) -> UploadJob.Completion {
        var machine = initial
        try resumeHashes(machine)
        report(machine)
        do {
            return try await withThrowingTaskGroup(of: Outcome.self) { group in
                while true {
                    let action = machine.nextAction()
                    switch action {
                    case .makeBlock(let index, _, _), .putChunk(let index, _, _, _):
                        let blockSize = machine.size(ofBlock: index)
                        group.addTask { try await send(action, index: index, blockSize: blockSize) }
                    case .wait:
                        guard let outcome = try await group.next() else { continue }
                        try apply(outcome, to: &machine)
                    case .makeFile(let contexts):
                        guard let etag = machine.etag else { throw UploadError(.integrity, "v1: a complete block without its SHA-1") }
                        switch try await makeFile(contexts) {
                        case .success(let response):
                            machine.handle(.fileMade)
                            return UploadJob.Completion(response: response, localEtag: etag, callbackFailed: false)
                        case .storedCallbackFailed(let response):
                            machine.handle(.fileMade)
                            return UploadJob.Completion(response: response, localEtag: etag, callbackFailed: true)
                        case .stale:
                            // A ctx died between its chunk and mkfile: redo every block.
                            for index in machine.blocks.indices {
                                hashes.reset(index)
                                machine.handle(.contextExpired(index: index))
                            }
                            report(machine)
                        }
                    case .finished:
                        throw UploadError(.integrity, "v1 state machine finished without a reply")
                    case .failed(let index, let reason):
                        throw UploadError(.integrity, "block \(index): \(reason)")
                    }
                }
            }
        } catch let error as UploadError {
            throw error
        } catch {
            throw job.sender.stopError()
        }
    }

    /// On resume, a block half sent before has its acknowledged bytes read back: they must still
    /// have the CRC-32 recorded when they were sent (else the file changed since), and they seed
    /// the block's SHA-1. At most `concurrency` blocks, each under 4 MiB.
    private func resumeHashes(_ machine: ResumableUpload) throws(UploadError) {
        for (index, block) in machine.blocks.enumerated() where block.context != nil && !machine.isDone(index) {
            let start = Int64(index) * ResumableUpload.blockSize
            let bytes = try job.source.read(offset: start, length: block.offset)
            let hash = hashes.accept(index, bytes: bytes, crc: CRC32.checksum(bytes), completesBlock: false)
            job.source.recycle(bytes)
            guard hash.crc32 == block.blockCRC32 else {
                throw job.watch.record(UploadError(
                    .fileChanged,
                    "the file changed since the checkpoint was written: the first \(block.offset) bytes of block \(index) "
                        + "differ from the ones sent"))
            }
        }
    }

    private func apply(_ outcome: Outcome, to machine: inout ResumableUpload) throws(UploadError) {
        guard case .event(let event, let progressID) = outcome else { return }
        job.reporter.end(progressID)
        machine.handle(event)
        if case .chunkAccepted = event {
            let blocks = machine.blocks
            try job.save { $0.blocks = blocks }
        }
        report(machine)
    }

    private func report(_ machine: ResumableUpload) {
        let states = machine.blocks.indices.map { index -> UploadProgress.BlockState in
            if machine.isDone(index) { return .done }
            return machine.blocks[index].inFlight || machine.blocks[index].offset > 0 ? .uploading : .pending
        }
        job.reporter.update(acknowledged: machine.acknowledgedBytes, blocks: states)
    }

    private func send(_ action: ResumableUpload.Action, index: Int, blockSize: Int) async throws -> Outcome {
        let path: String, range: Range<Int64>, blockOffset: Int
        switch action {
        case .makeBlock(_, let size, let chunk):
            (path, range, blockOffset) = (MkblkPath(blockSize: size).path, chunk, 0)
        case .putChunk(_, let context, let offset, let chunk):
            (path, range, blockOffset) = (BputPath(context: context, offset: offset).path, chunk, offset)
        default:
            preconditionFailure("not a chunk action")
        }
        let bytes = try job.source.read(offset: range.lowerBound, length: range.count)
        defer { job.source.recycle(bytes) }
        // A chunk that is a whole block (the default 4 MiB chunks) also gets the block's SHA-1 in
        // the same pass as its CRC-32 (kept only if the reply accepts it); a smaller chunk's bytes
        // join the block's running SHA-1 once accepted (``BlockHashes``).
        var crc32 = CRC32()
        var sha1: Digest? = blockOffset == 0 && range.count == blockSize ? Digest(.sha1) : nil
        HashSlices.forEach(bytes) { slice in
            crc32.update(slice)
            sha1?.update(slice)
        }
        let crc = crc32.value
        let wholeBlockSHA1 = sha1.take()?.finalize()
        let progressID = job.reporter.begin()
        let job = self.job
        let outcome = try await job.sender.send(payload: Int64(bytes.count)) { host, token in
            job.upRequest(
                method: "POST", host: host, path: path, token: token, contentType: "application/octet-stream",
                body: .bytes(bytes), progressID: progressID)
        }
        switch outcome {
        case .stale:
            hashes.reset(index)
            return .event(.contextExpired(index: index), progressID: progressID)
        case .storedCallbackFailed(let response):
            throw RequestSender.serverError(response, request: TransportRequest(method: "POST", url: path))
        case .success(let response):
            let json = try UploadJob.json(response, "mkblk/bput")
            guard let context = json["ctx"]?.stringValue, let replyCRC = json["crc32"]?.int64Value else {
                throw UploadError(.server(status: response.status), "mkblk/bput reply without ctx or crc32")
            }
            guard replyCRC == Int64(crc) else {
                return .event(.chunkFailed(index: index, retryable: true), progressID: progressID)
            }
            let offset = blockOffset + range.count
            let hash =
                if let wholeBlockSHA1 { hashes.acceptWhole(index, crc: crc, sha1: wholeBlockSHA1) } else {
                    hashes.accept(index, bytes: bytes, crc: crc, completesBlock: offset == blockSize)
                }
            let expiresAt = json["expired_at"]?.int64Value ?? 0
            return .event(
                .chunkAccepted(index: index, context: context, offset: offset, crc32: crc, expiresAt: expiresAt, hash: hash),
                progressID: progressID)
        }
    }

    private func makeFile(_ contexts: [String]) async throws(UploadError) -> RequestSender.Outcome {
        let request = job.request
        let path = MkfilePath(
            fsize: job.facts.size, key: request.key, fname: request.resolvedFname, mimeType: request.mimeType,
            customVariables: request.sortedVariables, metadata: request.sortedMetadata
        ).path
        let body = Array(contexts.joined(separator: ",").utf8)
        let job = self.job
        return try await job.sender.send(completes: true) { host, token in
            job.upRequest(method: "POST", host: host, path: path, token: token, contentType: "text/plain", body: .bytes(body))
        }
    }
}
