import HTTPTransport
import UpCore

/// Carries out ``ResumableUpload``'s actions (qiniu-protocol.md §4): each chunk's CRC-32 is read
/// from disk first (1 MiB at a time) and the chunk is then streamed from the file by the
/// transport, so memory stays bounded whatever the chunk size; a reply whose crc32 differs makes
/// the chunk go again (never skipped, unlike the Python SDK §9.5); a 701 redoes the block.
struct V1Uploader: Sendable {
    let job: UploadJob

    private enum Outcome: Sendable {
        case event(ResumableUpload.Event, progressID: Int)
    }

    /// Uploads every missing chunk, then makes the file; returns the mkfile reply.
    func run(_ initial: ResumableUpload) async throws(UploadError) -> TransportResponse {
        var machine = initial
        report(machine)
        do {
            return try await withThrowingTaskGroup(of: Outcome.self) { group in
                while true {
                    let action = machine.nextAction()
                    switch action {
                    case .makeBlock(let index, _, _), .putChunk(let index, _, _, _):
                        group.addTask { try await send(action, index: index) }
                    case .wait:
                        guard let outcome = try await group.next() else { continue }
                        try apply(outcome, to: &machine)
                    case .makeFile(let contexts):
                        switch try await makeFile(contexts) {
                        case .success(let response):
                            machine.handle(.fileMade)
                            return response
                        case .stale:
                            // A ctx died between its chunk and mkfile: redo every block.
                            for index in machine.blocks.indices { machine.handle(.contextExpired(index: index)) }
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

    private func send(_ action: ResumableUpload.Action, index: Int) async throws -> Outcome {
        let path: String, range: Range<Int64>, blockOffset: Int
        switch action {
        case .makeBlock(_, let blockSize, let chunk):
            (path, range, blockOffset) = (MkblkPath(blockSize: blockSize).path, chunk, 0)
        case .putChunk(_, let context, let offset, let chunk):
            (path, range, blockOffset) = (BputPath(context: context, offset: offset).path, chunk, offset)
        default:
            preconditionFailure("not a chunk action")
        }
        let file = job.request.filePath
        let crc = try FileRegion.crc32(path: file, offset: range.lowerBound, length: Int64(range.count))
        let progressID = job.reporter.begin()
        let job = self.job
        let outcome = try await job.sender.send { host, token in
            job.upRequest(
                method: "POST", host: host, path: path, token: token, contentType: "application/octet-stream",
                body: .file(path: file, offset: range.lowerBound, length: Int64(range.count)), progressID: progressID)
        }
        switch outcome {
        case .stale:
            return .event(.contextExpired(index: index), progressID: progressID)
        case .success(let response):
            let json = try UploadJob.json(response, "mkblk/bput")
            guard let context = json["ctx"]?.stringValue, let replyCRC = json["crc32"]?.int64Value else {
                throw UploadError(.server(status: response.status), "mkblk/bput reply without ctx or crc32")
            }
            guard replyCRC == Int64(crc) else {
                return .event(.chunkFailed(index: index, retryable: true), progressID: progressID)
            }
            let offset = json["offset"]?.int64Value.map(Int.init) ?? blockOffset + range.count
            let expiresAt = json["expired_at"]?.int64Value ?? 0
            return .event(
                .chunkAccepted(index: index, context: context, offset: offset, crc32: crc, expiresAt: expiresAt),
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
        return try await job.sender.send { host, token in
            job.upRequest(method: "POST", host: host, path: path, token: token, contentType: "text/plain", body: .bytes(body))
        }
    }
}
