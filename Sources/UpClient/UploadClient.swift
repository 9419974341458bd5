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
/// An upload is only completed (mkfile, complete, the form POST) while the file is still what it
/// was when the call began: a change (size, modification time, inode) stops it with
/// ``UploadError/Kind/fileChanged`` (``FileWatch``). The local etag is computed from the bytes as
/// they are sent, never from a second read of the file, and must equal the server's hash.
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
    /// (or cancelling the calling task, which counts as a pause) cancel at once. `progress` gets
    /// the byte counts as they grow; `onStart` is called once, before the first upload request,
    /// with the hosts, protocol and checkpoint decision.
    public func upload(
        _ request: UploadRequest, control: UploadControl = UploadControl(),
        progress: (@Sendable (UploadProgress) -> Void)? = nil, onStart: (@Sendable (UploadStart) -> Void)? = nil
    ) async throws(UploadError) -> UploadResult {
        control.begin()
        let task = Task { () async -> Result<UploadResult, UploadError> in
            do throws(UploadError) {
                return .success(try await run(request, control: control, progress: progress, onStart: onStart))
            } catch {
                return .failure(error)
            }
        }
        let id = control.register { task.cancel() }
        defer { control.unregister(id) }
        return try await Self.awaiting(task).get()
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

    /// The task's result; cancelling the waiting task cancels `task`.
    private static func awaiting<T: Sendable>(_ task: Task<T, Never>) async -> T {
        await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
    }

    private func run(
        _ request: UploadRequest, control: UploadControl, progress: (@Sendable (UploadProgress) -> Void)?,
        onStart: (@Sendable (UploadStart) -> Void)?
    ) async throws(UploadError) -> UploadResult {
        let started = ContinuousClock.now
        if control.isAborted {
            if let path = request.checkpointPath { try await abort(checkpoint: path, token: request.token) }
            throw UploadError(.aborted, "upload aborted")
        }
        let source = try SourceFile(path: request.filePath, keep: configuration.effectiveConcurrency + 1)
        let facts = try FileFacts.read(path: request.filePath, file: source)
        let tokens = TokenProvider(
            source: request.token,
            subject: .init(key: request.key, fname: request.resolvedFname, fsize: facts.size, mimeType: request.mimeType),
            transport: transport, clock: configuration.clock, refreshMargin: configuration.tokenRefreshMargin,
            policy: configuration.retryPolicy)
        let token = try await tokens.token()
        let hosts = configuration.upHosts.isEmpty ? token.upHosts : configuration.upHosts
        guard !hosts.isEmpty else { throw UploadError(.network, "no up host configured or handed out with the token") }
        let chosen = chooseProtocol(size: facts.size)

        // The checkpoint: lock, load, validate; one that cannot be resumed is removed.
        let store = chosen == .form ? nil : request.checkpointPath.map(CheckpointStore.init(path:))
        let owner = try store?.lock()
        defer { if let store, let owner { store.unlock(owner) } }
        let plan = UploadPlan(
            chosen: chosen, facts: facts, hosts: hosts, loaded: store?.load(),
            expected: Checkpoint.Expectation(
                uploadProtocol: chosen, upHosts: hosts, scope: token.scope, key: request.key, filePath: request.filePath,
                chunkSize: configuration.effectiveChunkSize, partSize: configuration.effectivePartSize),
            now: configuration.clock.unixSeconds, configuration: configuration)
        if plan.resumeFrom == nil { store?.remove() }

        let watch = FileWatch(path: request.filePath, facts: facts)
        let reporter = ProgressReporter(total: facts.size, callback: progress)
        let sender = RequestSender(
            hosts: plan.hosts, transport: transport, tokens: tokens, policy: configuration.retryPolicy, control: control,
            pacer: configuration.maxBytesPerSecond.map(UploadPacer.init(bytesPerSecond:)), watch: watch)
        let job = UploadJob(
            request: request, facts: facts, source: source, sender: sender, reporter: reporter, store: store,
            template: Checkpoint(
                uploadProtocol: chosen, upHost: plan.hosts[0], bucket: token.bucket, scope: token.scope, key: request.key,
                filePath: request.filePath, file: facts, blockSize: ResumableUpload.blockSize,
                chunkSize: configuration.effectiveChunkSize, partSize: configuration.effectivePartSize),
            bucket: token.bucket, timeout: configuration.requestTimeout, control: control, watch: watch)
        onStart?(UploadStart(
            upHosts: plan.hosts, uploadProtocol: plan.uploadProtocol, size: facts.size, resumed: plan.resumeFrom != nil,
            resumedBytes: plan.resumedBytes, checkpointNote: plan.note))

        let completion: UploadJob.Completion
        do {
            completion = try await Self.watching(watch) { () async throws(UploadError) in try await send(job, plan.machine) }
        } catch {
            await reporter.finish()
            throw stopped(error, job: job)
        }
        await reporter.finish()
        store?.remove()
        let json = try? JSONValue.parse(completion.response.body)
        let result = UploadResult(
            key: json?["key"]?.stringValue ?? request.key, hash: completion.localEtag, size: facts.size,
            reply: completion.response.body, duration: ContinuousClock.now - started, resumed: plan.resumeFrom != nil,
            bytesSent: sender.bytesSent, checkpointNote: plan.note)
        if completion.callbackFailed {
            var error = UploadError(
                .callbackFailed, "stored; the app's callback failed and will be retried: \(json?["error"]?.stringValue ?? "")",
                requestID: completion.response[header: "X-Reqid"])
            error.result = result
            throw error
        }
        if let hash = json?["hash"]?.stringValue, hash != completion.localEtag {
            throw UploadError(
                .integrity, "server hash \(hash) differs from the etag \(completion.localEtag) of the bytes sent",
                requestID: completion.response[header: "X-Reqid"])
        }
        return result
    }

    /// Runs `work` in a task of its own that is cancelled when `watch` sees the file change (or
    /// when the calling task is cancelled).
    private static func watching(
        _ watch: FileWatch, _ work: @escaping @Sendable () async throws(UploadError) -> UploadJob.Completion
    ) async throws(UploadError) -> UploadJob.Completion {
        let task = Task { () async -> Result<UploadJob.Completion, UploadError> in
            do throws(UploadError) { return .success(try await work()) } catch { return .failure(error) }
        }
        let watcher = watch.watch { task.cancel() }
        defer { watcher.cancel() }
        return try await awaiting(task).get()
    }

    /// The error to throw for a stopped or failed upload, with the checkpoint dealt with: a
    /// change of the file wins over whatever it caused (a 400 for a v2 part whose bytes no longer
    /// match their Content-MD5, a short read); abort and file changes remove the checkpoint; a
    /// kept checkpoint's acknowledged bytes go into ``UploadError/savedBytes``.
    private func stopped(_ error: UploadError, job: UploadJob) -> UploadError {
        var failure = error
        if let change = job.watch.change {
            // The watch stopped the upload: whatever the cancellation looked like to the step it hit.
            failure = change
        } else if failure.kind != .paused, failure.kind != .aborted {
            do throws(UploadError) { try job.watch.check() } catch { failure = error }
        }
        switch failure.kind {
        case .aborted, .fileChanged: job.store?.remove()
        default: if job.store != nil { failure.savedBytes = job.reporter.acknowledgedBytes }
        }
        return failure
    }

    private func chooseProtocol(size: Int64) -> UploadProtocol {
        switch configuration.protocolChoice {
        case .automatic: size <= configuration.effectiveFormThreshold ? .form : .v1
        case let chosen: chosen
        }
    }

    private func send(_ job: UploadJob, _ machine: UploadPlan.Machine) async throws(UploadError) -> UploadJob.Completion {
        switch machine {
        case .form:
            return try await FormUploader(job: job).run()
        case .v1(let machine):
            try job.save { $0.blocks = machine.blocks }
            return try await V1Uploader(job: job).run(machine)
        case .v2(let machine):
            return try await V2Uploader(job: job).run(machine)
        }
    }
}
