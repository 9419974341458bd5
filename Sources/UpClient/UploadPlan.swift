/// How one upload call goes: the protocol, its state machine (fresh or restored from a valid
/// checkpoint), the up hosts in order, and what happened to an existing checkpoint. Decided
/// before the first upload request, from values only (the checkpoint is already loaded).
struct UploadPlan: Sendable {
    /// The protocol's state, ready to run.
    enum Machine: Sendable {
        /// One form POST.
        case form
        /// v1 blocks and chunks.
        case v1(ResumableUpload)
        /// v2 parts.
        case v2(MultipartUpload)
    }

    /// The state machine to run.
    var machine: Machine
    /// Up hosts in the order to try them (a resumed upload's host first).
    var hosts: [String]
    /// The checkpoint resumed, if any.
    var resumeFrom: Checkpoint?
    /// Why an existing checkpoint is not used (it is removed); nil otherwise.
    var note: String?

    /// The protocol of ``machine``.
    var uploadProtocol: UploadProtocol {
        switch machine {
        case .form: .form
        case .v1: .v1
        case .v2: .v2
        }
    }

    /// Bytes the restored machine already has acknowledged.
    var resumedBytes: Int64 {
        switch machine {
        case .form: 0
        case .v1(let machine): machine.acknowledgedBytes
        case .v2(let machine): machine.acknowledgedBytes
        }
    }

    /// Plans the upload of a file described by `facts` with protocol `chosen`, resuming `loaded`
    /// (the checkpoint file's content, if there is one) when it validates against `expected` at `now`.
    init(
        chosen: UploadProtocol, facts: FileFacts, hosts configured: [String], loaded: Result<Checkpoint, Checkpoint.Invalidity>?,
        expected: Checkpoint.Expectation, now: Int64, configuration: UploadClient.Configuration
    ) {
        hosts = configured
        switch loaded {
        case .failure(let invalidity): note = invalidity.description
        case .success(let checkpoint):
            // A ctx must outlive the upload's first minutes, not just this instant.
            if let invalidity = checkpoint.validate(against: facts, request: expected, now: now, margin: 60) {
                note = invalidity.description
            } else {
                resumeFrom = checkpoint
                hosts = [checkpoint.upHost] + configured.filter { $0 != checkpoint.upHost }
            }
        case nil: break
        }
        switch chosen {
        case .v1:
            machine = .v1(ResumableUpload(
                fileSize: facts.size, chunkSize: configuration.effectiveChunkSize, concurrency: configuration.effectiveConcurrency,
                maxFailures: configuration.maxRetries, blocks: resumeFrom?.blocks))
        case .v2:
            machine = .v2(MultipartUpload(
                fileSize: facts.size, partSize: configuration.effectivePartSize, concurrency: configuration.effectiveConcurrency,
                maxFailures: configuration.maxRetries, uploadID: resumeFrom?.uploadID, expiresAt: resumeFrom?.uploadExpiresAt ?? 0,
                parts: resumeFrom?.parts ?? []))
        case .form, .automatic:
            machine = .form
        }
    }
}
