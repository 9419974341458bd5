import Foundation
import HTTPKit
import NativeCrypto
import TestSupport
import UpCore
@testable import UpServer

/// v1 calls over the harness (qiniu-protocol.md §4), so tests read like the SDK's wire trace.
extension UpServerHarness {
    /// The MAC the harness server signs ctxs with.
    var contextMAC: HMACSHA1 { HMACSHA1(key: Array("test-context-secret-0123456789".utf8)) }

    /// `POST /mkblk/<blockSize>` with `body` as the first chunk.
    func mkblk(_ token: String, blockSize: Int, _ body: [UInt8]) async -> Response {
        await send(.post, "/mkblk/\(blockSize)", headers: Self.auth(token), body: body)
    }

    /// `POST /bput/<ctx>/<offset>`.
    func bput(_ token: String, ctx: String, offset: Int, _ body: [UInt8]) async -> Response {
        await send(.post, "/bput/\(ctx)/\(offset)", headers: Self.auth(token), body: body)
    }

    /// `POST <path>` with the ctxs joined by `,`.
    func mkfile(_ token: String, _ path: String, _ contexts: [String]) async -> Response {
        await send(.post, path, headers: Self.auth(token), body: Array(contexts.joined(separator: ",").utf8))
    }

    /// Uploads `bytes` as one block in one mkblk; returns its ctx ("" on failure, which the
    /// caller's later expectations catch).
    func block(_ token: String, _ bytes: [UInt8]) async -> String {
        let reply = await mkblk(token, blockSize: bytes.count, bytes)
        return reply.json["ctx"] as? String ?? ""
    }

    /// Uploads `data` as 4 MiB blocks, one mkblk each; returns the ctxs in file order.
    func blocks(_ token: String, _ data: [UInt8]) async -> [String] {
        var contexts: [String] = []
        var start = 0
        while start < data.count {
            let end = min(data.count, start + QiniuBlock.size)
            contexts.append(await block(token, Array(data[start..<end])))
            start = end
        }
        return contexts
    }

    /// The bytes of a stored object, read back segment by segment.
    func content(bucket: String = bucket, key: String) async throws -> [UInt8]? {
        guard let object = await index.object(bucket: bucket, key: key) else { return nil }
        var bytes: [UInt8] = []
        for segment in object.segments { bytes += try blobs.read(segment.blob, range: 0..<segment.length) }
        return bytes
    }

    /// The blob a ctx names.
    func blob(of ctx: String) throws -> BlobID? {
        BlockContexts.blob(of: try BlockContext.decode(ctx, mac: contextMAC, now: now))
    }
}

/// Path builders for mkfile (padded B64, as the SDKs send).
enum V1Paths {
    /// `B64(text)`.
    static func b64(_ text: String) -> String { URLSafeBase64.encode(text.utf8) }

    /// `/mkfile/<fsize>/key/<B64 key>`.
    static func mkfile(_ fsize: Int, key: String? = nil) -> String {
        MkfilePath(fsize: Int64(fsize), key: key).path
    }
}

/// Deterministic test content.
enum V1Data {
    /// 4 MiB.
    static let block = QiniuBlock.size

    /// `count` pseudo-random bytes from `seed`.
    static func bytes(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
        var source = ByteSource(seed: seed)
        return source.next(count)
    }
}
