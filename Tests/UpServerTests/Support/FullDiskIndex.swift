import Synchronization
import TestSupport
import UpCore
@testable import UpServer

/// An `InMemoryUpIndex` whose chosen writes find the disk full: they throw
/// `UpError(.insufficientStorage)` — what `SQLiteUpIndex` throws for SQLITE_FULL — and change
/// nothing. Everything else is passed through.
final class FullDiskIndex: UpIndex {
    /// The writes that can be refused.
    enum Write: Hashable, Sendable {
        case createBlock, advanceBlock, putObject, recordCompletionResult, createUpload, putPart, completeUpload
        case markDelivered, markAttemptFailed, sweepExpired
    }

    let base = InMemoryUpIndex()
    private let full = Mutex<Set<Write>>([])
    private let refusals = Mutex(0)

    /// Refuses `writes` from now on (replacing the earlier set; empty: space is back).
    func refuse(_ writes: Set<Write>) { full.withLock { $0 = writes } }

    /// How many writes were refused so far.
    var refused: Int { refusals.withLock { $0 } }

    private func check(_ write: Write) throws {
        guard full.withLock({ $0.contains(write) }) else { return }
        refusals.withLock { $0 += 1 }
        throw UpError(.insufficientStorage, detail: "test: \(write) refused")
    }

    func createBlock(
        _ blob: BlobID, blockSize: Int64, received: Int64, crc32: UInt32, sha1: [UInt8]?, expiresAt: Int64,
        createdAt: Int64
    ) async throws -> BlockRecord {
        try check(.createBlock)
        return try await base.createBlock(
            blob, blockSize: blockSize, received: received, crc32: crc32, sha1: sha1, expiresAt: expiresAt,
            createdAt: createdAt)
    }

    func advanceBlock(
        _ blob: BlobID, from expectedOffset: Int64, to newOffset: Int64, crc32: UInt32, sha1: [UInt8]?
    ) async throws -> Bool {
        try check(.advanceBlock)
        return try await base.advanceBlock(blob, from: expectedOffset, to: newOffset, crc32: crc32, sha1: sha1)
    }

    func rewindBlock(_ blob: BlobID, from currentOffset: Int64, to offset: Int64, crc32: UInt32) async throws -> Bool {
        try await base.rewindBlock(blob, from: currentOffset, to: offset, crc32: crc32)
    }

    func block(_ blob: BlobID) async throws -> BlockRecord? { await base.block(blob) }

    func putObject(
        _ object: StoredObject, mode: PutMode, completion: NewCompletion?, callback: NewOutboxEntry?
    ) async throws -> PutObjectOutcome {
        try check(.putObject)
        return try await base.putObject(object, mode: mode, completion: completion, callback: callback)
    }

    func object(bucket: String, key: String) async throws -> StoredObject? { await base.object(bucket: bucket, key: key) }

    func deleteObject(bucket: String, key: String) async throws -> [BlobID]? {
        await base.deleteObject(bucket: bucket, key: key)
    }

    func completion(_ key: CompletionKey) async throws -> Completion? { await base.completion(key) }

    func recordCompletionResult(_ key: CompletionKey, result: String) async throws -> String? {
        try check(.recordCompletionResult)
        return await base.recordCompletionResult(key, result: result)
    }

    func createUpload(bucket: String, key: String?, expiresAt: Int64, createdAt: Int64) async throws -> MultipartUpload {
        try check(.createUpload)
        return await base.createUpload(bucket: bucket, key: key, expiresAt: expiresAt, createdAt: createdAt)
    }

    func upload(id: String) async throws -> MultipartUpload? { await base.upload(id: id) }

    func putPart(_ part: UploadPart, now: Int64) async throws -> BlobID? {
        try check(.putPart)
        return try await base.putPart(part, now: now)
    }

    func listParts(uploadID: String, marker: Int, max: Int) async throws -> PartListing {
        try await base.listParts(uploadID: uploadID, marker: marker, max: max)
    }

    func completeUpload(
        _ id: String, parts: [PartReference], object: StoredObject, mode: PutMode, completion: NewCompletion?,
        callback: NewOutboxEntry?, now: Int64
    ) async throws -> PutObjectOutcome {
        try check(.completeUpload)
        return try await base.completeUpload(
            id, parts: parts, object: object, mode: mode, completion: completion, callback: callback, now: now)
    }

    func abortUpload(_ id: String) async throws -> [BlobID] { try await base.abortUpload(id) }

    func retireUpload(_ id: String, recording completion: Completion) async throws -> [BlobID] {
        try await base.retireUpload(id, recording: completion)
    }

    func dueCallbacks(now: Int64, limit: Int) async throws -> [OutboxEntry] {
        await base.dueCallbacks(now: now, limit: limit)
    }

    func outboxEntry(id: Int64) async throws -> OutboxEntry? { await base.outboxEntry(id: id) }

    func markDelivered(_ id: Int64, reply: String) async throws {
        try check(.markDelivered)
        try await base.markDelivered(id, reply: reply)
    }

    func markAttemptFailed(_ id: Int64, error: String, nextAttemptAt: Int64?) async throws {
        try check(.markAttemptFailed)
        try await base.markAttemptFailed(id, error: error, nextAttemptAt: nextAttemptAt)
    }

    func outboxDepth() async throws -> Int { await base.outboxDepth() }

    func listOutbox(state: OutboxEntry.State, limit: Int) async throws -> [OutboxEntry] {
        await base.listOutbox(state: state, limit: limit)
    }

    func expiredBlocks(now: Int64) async throws -> [BlockRecord] { await base.expiredBlocks(now: now) }

    func expiredUploads(now: Int64) async throws -> [MultipartUpload] { await base.expiredUploads(now: now) }

    func sweepExpired(now: Int64) async throws -> SweepPlan {
        try check(.sweepExpired)
        return try await base.sweepExpired(now: now)
    }

    func knownBlobs() async throws -> Set<BlobID> { await base.knownBlobs() }
}
