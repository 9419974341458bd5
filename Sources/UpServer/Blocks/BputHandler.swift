import Basics
import HTTPKit
import UpCore

/// `POST /bput/<ctx>/<nextChunkOffset>`: appends the next chunk of a v1 block
/// (qiniu-protocol.md §4.2).
///
/// The ctx is self-verifying (DESIGN.md): its MAC and expiry are checked before anything is
/// touched (701 for a forged, malformed or expired ctx, or an offset in the path that differs
/// from the ctx's); then, holding the block, the row is read and `BlockUpload` decides — advance,
/// rewind an incomplete block to an older ctx, replay a chunk of a complete one, or 701.
///
/// Concurrency: the blob is held in `BlobWriteLocks` across "read row → append → advance",
/// because `append` truncates past the acknowledged offset and two writers would cut each
/// other's bytes. A second request for the same block TAKES OVER from one still running
/// (`BlobWriteLocks.takeOver`): the earlier one was never acknowledged and its client has given
/// up on it — typically its connection died, which libmicrohttpd may only notice at its
/// connection timeout — so the newcomer should not wait for that; the superseded request ends
/// with `599 chunk superseded` (`BlockUpload`'s answer to a cancelled step). If the earlier one
/// did finish first, the newcomer gets 701 (offset moved), exactly as a late duplicate would.
struct BputHandler: Sendable {
    let authorizer: UploadAuthorizer
    let runner: BlockUploadRunner
    /// The writer of each block being written in this process (takeover, see above).
    let writers: BlobWriteLocks
    let clock: any WallClock

    /// Handles one request.
    func handle(_ request: Request) async throws -> Response {
        let now = clock.unixSeconds
        // §1.2 step 3: intermediate steps reject an expired token too.
        let token = try authorizer.authorize(header: request.headers["Authorization"], now: now)
        let path = try BputPath.parse(request.path)
        let context = try runner.contexts.decode(path.context, now: now)
        guard path.offset == context.offset else {
            throw UpError(.invalidContext, detail: "bput offset \(path.offset), ctx offset \(context.offset)")
        }
        guard let blob = BlockContexts.blob(of: context) else {
            throw UpError(.invalidContext, detail: "ctx block id is not a blob id")
        }
        try token.policy.checkSize(Int64(context.blockSize), isFinal: false)
        let claim = BlockUpload.Claim(offset: Int64(context.offset), blockSize: Int64(context.blockSize), crc32: context.crc32)
        if let refusal = BlockUpload.refusal(declaredLength: request.declaredLength, claim: claim, isNew: false) {
            throw refusal
        }
        let runner = self.runner
        do {
            return try await writers.takeOver(blob) {
                let row = try await runner.blocks.block(blob)
                var (machine, first) = BlockUpload.bput(blob: blob, claim: claim, row: row)
                return try await runner.run(&machine, from: first, body: request.bodyStream)
            }
        } catch is CancellationError {
            // Taken over before it began.
            throw UpError(.chunkSuperseded, detail: "chunk for block \(blob) superseded by a newer request")
        }
    }
}
