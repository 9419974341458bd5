import Basics
import HTTPKit
import UpCore

/// `POST /mkfile/<fsize>/...` and the legacy `POST /rs-mkfile/<EncodedEntryURI>/fsize/<n>/...`:
/// turn a list of completed v1 blocks into an object (qiniu-protocol.md §4.3, §4.4).
///
/// The token is re-validated here and may be a fresh one (§1.2 step 3, §4.3): ctxs are bound to
/// the server secret, never to the token that uploaded the blocks. The object is a manifest of
/// the block blobs (no copy, DESIGN.md "mkfile and the disk"), stored by `ObjectCommitter` with
/// a completion record, so a repeat of a finished mkfile with the same fsize, key and ctx list
/// answers with the first result instead of 701 or 614 (DESIGN.md "mkfile is idempotent").
struct MkfileHandler: Sendable {
    let authorizer: UploadAuthorizer
    let blocks: any BlockIndex
    let blobs: any BlockStore
    let objects: any ObjectIndex
    let contexts: BlockContexts
    let committer: ObjectCommitter
    let clock: any WallClock

    /// What the two path shapes have in common.
    private struct Target {
        var fsize: Int64
        var key: String?
        var fname: String?
        var mimeType: String?
        var customVariables: [(name: String, value: String)] = []
        var metadata: [(name: String, value: String)] = []
    }

    /// `POST /mkfile/...` (§4.3).
    func handleMkfile(_ request: Request) async throws -> Response {
        let now = clock.unixSeconds
        let token = try authorizer.authorize(header: request.headers["Authorization"], now: now)
        let path = try MkfilePath.parse(request.path)
        let target = Target(
            fsize: path.fsize, key: path.key, fname: path.fname, mimeType: path.mimeType,
            customVariables: path.customVariables, metadata: path.metadata)
        return try await make(target, token: token, body: request.body, now: now)
    }

    /// `POST /rs-mkfile/<B64 bucket[:key]>/fsize/<n>/...` (§4.4). The entry's bucket must be the
    /// token's (else 403, as for a key outside the scope); `meta`, `customer`, `params` and
    /// `rotate` are accepted and ignored. The body is the ctx list; the even older form (raw
    /// 20-byte block SHA-1s) is not supported — it is not ctx text, so it is a 400.
    func handleRsMkfile(_ request: Request) async throws -> Response {
        let now = clock.unixSeconds
        let token = try authorizer.authorize(header: request.headers["Authorization"], now: now)
        let path = try RsMkfilePath.parse(request.path)
        guard path.bucket.utf8.elementsEqual(token.policy.bucket.utf8) else {
            throw UpError(.keyMismatch, detail: "rs-mkfile bucket \(path.bucket), token bucket \(token.policy.bucket)")
        }
        let target = Target(fsize: path.fsize, key: path.key, mimeType: path.mimeType)
        return try await make(target, token: token, body: request.body, now: now)
    }

    private func make(_ target: Target, token: UpToken, body: [UInt8], now: Int64)
        async throws -> Response
    {
        // §1.3 fsizeLimit: refuse a declared size over the limit before touching any block.
        try token.policy.checkSize(target.fsize, isFinal: false)
        let contexts = try MkfileBody.parse(body).contexts
        let sniff = token.policy.needsSniffedType(clientMimeType: target.mimeType, fname: target.fname, key: target.key)
        let assembly = try await BlockAssembly.assemble(
            contexts: contexts, fsize: target.fsize, signer: self.contexts, blocks: blocks, blobs: blobs, sniff: sniff,
            now: now)
        let bucket = token.policy.bucket
        let completion = NewCompletion(
            key: CompletionKey.mkfile(bucket: bucket, key: target.key, fsize: target.fsize, contexts: contexts),
            expiresAt: max(assembly.latestExpiry, now))
        let request = CommitRequest(
            token: token, clientKey: target.key, fname: target.fname, clientMimeType: target.mimeType,
            sniffedMimeType: assembly.sniffedMimeType, customVariables: target.customVariables,
            metadata: target.metadata, etag: assembly.etag, fsize: assembly.fsize, segments: assembly.segments,
            kind: .resumableV1, completionKey: completion.key)
        let objects = self.objects
        let result = try await committer.commit(request) { object, mode, callback in
            try await objects.putObject(object, mode: mode, completion: completion, callback: callback)
        }
        return result.response
    }
}
