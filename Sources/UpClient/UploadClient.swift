import Basics
import Foundation
public import HTTPTransport
import UpCore

/// The reference upload client: form, v1 resumable and v2 multipart uploads to Qiniu-compatible
/// up hosts (up-server or real Qiniu), with checkpoints, retries and fail-over.
///
/// The protocol logic lives in pure state machines (``ResumableUpload``, ``MultipartUpload``,
/// ``RetryPolicy``, ``Checkpoint/validate(against:request:now:margin:)``); this type and its
/// drivers only carry out their actions over an ``HTTPTransport``.
///
/// ```swift
/// let client = UploadClient(configuration: .init(upHosts: ["http://127.0.0.1:9000"]),
///                           transport: try CurlTransport())
/// let result = try await client.upload(UploadRequest(filePath: "big.bin", key: "demo/big.bin",
///     token: .bizServer(url: "http://127.0.0.1:8080", apiKey: key), checkpointPath: "big.ckpt"))
/// ```
public struct UploadClient: Sendable {
    /// The settings.
    public let configuration: Configuration
    private let transport: any HTTPTransport

    /// Creates a client sending through `transport`.
    public init(configuration: Configuration, transport: any HTTPTransport) {
        self.configuration = configuration
        self.transport = transport
    }

    /// Uploads `file`; resumes from `checkpoint` when it is valid.
    ///
    /// The work runs in a task of its own that ``UploadControl/pause()`` / ``UploadControl/abort()``
    /// (or cancelling the calling task, which counts as a pause) cancel at once.
    public func upload(
        _ request: UploadRequest, control: UploadControl = UploadControl(),
        progress: (@Sendable (UploadProgress) -> Void)? = nil
    ) async throws(UploadError) -> UploadResult {
        control.begin()
        let task = Task { () async -> Result<UploadResult, UploadError> in
            do throws(UploadError) { return .success(try await run(request, control: control, progress: progress)) } catch {
                return .failure(error)
            }
        }
        let id = control.register { task.cancel() }
        defer { control.unregister(id) }
        let result = await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
        return try result.get()
    }

    /// Deletes a checkpoint and aborts its v2 upload on the server if any.
    public func abort(checkpoint path: String, token: TokenSource) async throws(UploadError) {
        let store = CheckpointStore(path: path)
        let owner = try store.lock()
        defer { store.unlock(owner) }
        if case .success(let checkpoint) = store.load(), checkpoint.uploadProtocol == .v2, let id = checkpoint.uploadID {
            let tokens = TokenProvider(
                source: token,
                subject: .init(key: checkpoint.key, fname: nil, fsize: checkpoint.file.size, mimeType: nil),
                transport: transport, clock: configuration.clock, refreshMargin: configuration.tokenRefreshMargin,
                policy: configuration.retryPolicy)
            let text = try await tokens.token().text
            let path = MultipartPath(bucket: checkpoint.bucket, key: checkpoint.key, resource: .upload(id: id)).path
            let host = checkpoint.upHost
            // 612 (already gone) is as good as 200; a network failure leaves it to the server's expiry.
            _ = try? await transport.send(
                TransportRequest(method: "DELETE", url: host + path, headers: [("Authorization", "UpToken " + text)]))
        }
        store.remove()
    }

    private func run(
        _ request: UploadRequest, control: UploadControl, progress: (@Sendable (UploadProgress) -> Void)?
    ) async throws(UploadError) -> UploadResult {
        let started = ContinuousClock.now
        if control.isAborted {
            if let path = request.checkpointPath { try await abort(checkpoint: path, token: request.token) }
            throw UploadError(.aborted, "upload aborted")
        }
        let facts = try FileFacts.read(path: request.filePath)
        let tokens = TokenProvider(
            source: request.token,
            subject: .init(key: request.key, fname: request.resolvedFname, fsize: facts.size, mimeType: request.mimeType),
            transport: transport, clock: configuration.clock, refreshMargin: configuration.tokenRefreshMargin,
            policy: configuration.retryPolicy)
        let token = try await tokens.token()
        var hosts = configuration.upHosts.isEmpty ? token.upHosts : configuration.upHosts
        guard !hosts.isEmpty else { throw UploadError(.network, "no up host configured or handed out with the token") }
        let chosen = chooseProtocol(size: facts.size)

        // The checkpoint: lock, load, validate.
        let store = chosen == .form ? nil : request.checkpointPath.map(CheckpointStore.init(path:))
        let owner = try store?.lock()
        defer { if let store, let owner { store.unlock(owner) } }
        var template = Checkpoint(
            uploadProtocol: chosen, upHost: hosts[0], bucket: token.bucket, scope: token.scope, key: request.key,
            filePath: request.filePath, file: facts, blockSize: ResumableUpload.blockSize,
            chunkSize: configuration.effectiveChunkSize, partSize: configuration.effectivePartSize)
        var resumeFrom: Checkpoint?
        var note: String?
        if let store, let loaded = store.load() {
            let expected = Checkpoint.Expectation(
                uploadProtocol: chosen, upHosts: hosts, scope: token.scope, key: request.key, filePath: request.filePath,
                chunkSize: configuration.effectiveChunkSize, partSize: configuration.effectivePartSize)
            switch loaded {
            case .failure(let invalidity): note = invalidity.description
            case .success(let checkpoint):
                // A ctx must outlive the upload's first minutes, not just this instant.
                if let invalidity = checkpoint.validate(
                    against: facts, request: expected, now: configuration.clock.unixSeconds, margin: 60)
                {
                    note = invalidity.description
                } else {
                    resumeFrom = checkpoint
                    hosts = [checkpoint.upHost] + hosts.filter { $0 != checkpoint.upHost }
                    template.upHost = checkpoint.upHost
                }
            }
            if resumeFrom == nil { store.remove() }
        }

        let reporter = ProgressReporter(total: facts.size, callback: progress)
        let sender = RequestSender(
            hosts: hosts, transport: transport, tokens: tokens, policy: configuration.retryPolicy, control: control)
        let job = UploadJob(
            request: request, facts: facts, sender: sender, reporter: reporter, store: store, template: template,
            bucket: token.bucket, timeout: configuration.requestTimeout, control: control)
        let partSize = chosen == .v2 ? configuration.effectivePartSize : nil
        let etagTask = Task { () -> Result<String, UploadError> in
            do throws(UploadError) {
                return .success(try LocalEtag.compute(path: request.filePath, length: facts.size, partSize: partSize))
            } catch {
                return .failure(error)
            }
        }
        defer { etagTask.cancel() }

        let response: TransportResponse
        do {
            response = try await send(job, protocol: chosen, resumeFrom: resumeFrom)
        } catch {
            await reporter.finish()
            if error.kind == .aborted { store?.remove() }
            throw error
        }
        await reporter.finish()
        let localEtag = try await etagTask.value.get()
        let json = try? JSONValue.parse(response.body)
        let hash = json?["hash"]?.stringValue ?? localEtag
        guard hash == localEtag else {
            throw UploadError(
                .integrity, "server hash \(hash) differs from the local etag \(localEtag): the file changed during the upload?",
                requestID: response[header: "X-Reqid"])
        }
        store?.remove()
        return UploadResult(
            key: json?["key"]?.stringValue ?? request.key, hash: hash, size: facts.size, reply: response.body,
            duration: ContinuousClock.now - started, resumed: resumeFrom != nil, bytesSent: sender.bytesSent,
            checkpointNote: note)
    }

    private func chooseProtocol(size: Int64) -> UploadProtocol {
        switch configuration.protocolChoice {
        case .automatic: size <= configuration.effectiveFormThreshold ? .form : .v1
        case let chosen: chosen
        }
    }

    private func send(_ job: UploadJob, protocol chosen: UploadProtocol, resumeFrom: Checkpoint?) async throws(UploadError)
        -> TransportResponse
    {
        switch chosen {
        case .form, .automatic:
            return try await FormUploader(job: job).run()
        case .v1:
            let machine = ResumableUpload(
                fileSize: job.facts.size, chunkSize: configuration.effectiveChunkSize,
                concurrency: configuration.effectiveConcurrency, maxFailures: configuration.maxRetries,
                blocks: resumeFrom?.blocks)
            try job.save { $0.blocks = machine.blocks }
            return try await V1Uploader(job: job).run(machine)
        case .v2:
            let machine = MultipartUpload(
                fileSize: job.facts.size, partSize: configuration.effectivePartSize,
                concurrency: configuration.effectiveConcurrency, maxFailures: configuration.maxRetries,
                uploadID: resumeFrom?.uploadID, expiresAt: resumeFrom?.uploadExpiresAt ?? 0, parts: resumeFrom?.parts ?? [])
            return try await V2Uploader(job: job).run(machine)
        }
    }
}
