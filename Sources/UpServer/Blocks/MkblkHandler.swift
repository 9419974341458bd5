import Basics
import HTTPKit
import UpCore

/// `POST /mkblk/<blockSize>`: starts a v1 block with its first chunk (qiniu-protocol.md §4.1).
///
/// Order: token (401/631), path (400), size limit (413), then the body is streamed into a fresh
/// blob; only when every byte is written (and, for a complete block, fsynced and hashed) is the
/// block row created (holding the chunk), and only then is the ctx issued — "acknowledged means
/// stored" (DESIGN.md). The row is created after the bytes, in ONE index write, so a failed or
/// oversized request leaves no row behind: its blob is removed at once (and a crash in between
/// leaves an orphan blob, which the orphan sweep finds). No write lock is needed: nobody else
/// knows the new blob's id before the reply. The decisions are `BlockUpload`'s.
struct MkblkHandler: Sendable {
    let authorizer: UploadAuthorizer
    let runner: BlockUploadRunner
    let clock: any WallClock

    /// Handles one request.
    func handle(_ request: Request) async throws -> Response {
        let now = clock.unixSeconds
        let token = try authorizer.authorize(header: request.headers["Authorization"], now: now)
        let path = try MkblkPath.parse(request.path)
        let blockSize = Int64(path.blockSize)
        // §1.3 fsizeLimit "at mkblk time too (cumulative)": v1 has no upload id tying blocks
        // together, so the one total known here is this block's size; mkfile checks the sum.
        try token.policy.checkSize(blockSize, isFinal: false)
        let claim = BlockUpload.Claim(offset: 0, blockSize: blockSize, crc32: 0)
        if let refusal = BlockUpload.refusal(declaredLength: request.declaredLength, claim: claim, isNew: true) {
            throw refusal
        }
        let store = runner.ingest.store
        let blob = try await BlockingWork.run { try store.create() }
        var (machine, first) = BlockUpload.mkblk(
            blob: blob, blockSize: blockSize, now: now, expiresAt: now + runner.contexts.lifetimeSeconds)
        return try await runner.run(&machine, from: first, body: request.bodyStream)
    }
}
