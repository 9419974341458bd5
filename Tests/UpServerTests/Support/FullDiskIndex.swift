import Outbox
import Synchronization
import TestSupport
import UpCore
@testable import UpServer

/// An `InMemoryUpIndex` (every index role, and its callback outbox) whose chosen writes find the
/// disk full: they throw `UpError(.insufficientStorage)` — what `SQLiteUpIndex` throws for
/// SQLITE_FULL — and change nothing. Everything else is passed through.
final class FullDiskIndex: BlockIndex, ObjectIndex, MultipartIndex, SweepIndex {
    /// The writes that can be refused.
    enum Write: Hashable, Sendable {
        case createBlock, advanceBlock, putObject, recordCompletionResult, createUpload, putPart, completeUpload
        /// The outbox's record of an attempt's outcome (delivered, retry, dead).
        case recordOutcome
        case sweepExpired
    }

    let base = InMemoryUpIndex()
    private let space = DiskSpace()
    /// The callback outbox, refusing `.recordOutcome` when told to.
    let outbox: FullDiskOutbox

    init() { outbox = FullDiskOutbox(base: base.outbox, space: space) }

    /// Refuses `writes` from now on (replacing the earlier set; empty: space is back).
    func refuse(_ writes: Set<Write>) { space.full.withLock { $0 = writes } }

    /// How many writes were refused so far.
    var refused: Int { space.refusals.withLock { $0 } }

    /// The stores of an up-server over this index.
    func stores(blobs: any BlockStore) -> UpStores {
        UpStores(blobs: blobs, blocks: self, uploads: self, objects: self, catalog: base, sweep: self, outbox: outbox)
    }

    private func check(_ write: Write) throws { try space.check(write) }

    func createBlock(
        _ blob: BlobID, blockSize: Int64, received: Int64, crc32: UInt32, sha1: [UInt8]?, sniffedType: String??,
        expiresAt: Int64, createdAt: Int64
    ) async throws -> BlockRecord {
        try check(.createBlock)
        return try await base.createBlock(
            blob, blockSize: blockSize, received: received, crc32: crc32, sha1: sha1, sniffedType: sniffedType,
            expiresAt: expiresAt, createdAt: createdAt)
    }

    func advanceBlock(
        _ blob: BlobID, from expectedOffset: Int64, to newOffset: Int64, crc32: UInt32, sha1: [UInt8]?
    ) async throws -> Bool {
        try check(.advanceBlock)
        return try await base.advanceBlock(blob, from: expectedOffset, to: newOffset, crc32: crc32, sha1: sha1)
    }

    func rewindBlock(_ blob: BlobID, from currentOffset: Int64, to offset: Int64, crc32: UInt32) async throws -> Bool {
        await base.rewindBlock(blob, from: currentOffset, to: offset, crc32: crc32)
    }

    func block(_ blob: BlobID) async throws -> BlockRecord? { await base.block(blob) }

    func putObject(
        _ object: StoredObject, mode: PutMode, completion: NewCompletion?, callback: OutboxMessage?
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
        await base.listParts(uploadID: uploadID, marker: marker, max: max)
    }

    func completeUpload(
        _ id: String, parts: [PartReference], object: StoredObject, mode: PutMode, completion: NewCompletion?,
        callback: OutboxMessage?, now: Int64
    ) async throws -> PutObjectOutcome {
        try check(.completeUpload)
        return try await base.completeUpload(
            id, parts: parts, object: object, mode: mode, completion: completion, callback: callback, now: now)
    }

    func abortUpload(_ id: String) async throws -> [BlobID] { try await base.abortUpload(id) }

    func retireUpload(_ id: String, recording completion: Completion) async throws -> [BlobID] {
        try await base.retireUpload(id, recording: completion)
    }

    func sweepExpired(now: Int64) async throws -> SweepPlan {
        try check(.sweepExpired)
        return await base.sweepExpired(now: now)
    }

    func knownBlobs() async throws -> Set<BlobID> { await base.knownBlobs() }
    func deleteExpiredObjects(now: Int64, limit: Int) async throws -> ExpiredObjects {
        await base.deleteExpiredObjects(now: now, limit: limit)
    }
}

/// Which writes find the disk full, and how many did.
final class DiskSpace: Sendable {
    let full = Mutex<Set<FullDiskIndex.Write>>([])
    let refusals = Mutex(0)

    func check(_ write: FullDiskIndex.Write) throws {
        guard full.withLock({ $0.contains(write) }) else { return }
        refusals.withLock { $0 += 1 }
        throw UpError(.insufficientStorage, detail: "test: \(write) refused")
    }
}

/// The callback outbox of a `FullDiskIndex`: recording an outcome can find the disk full.
final class FullDiskOutbox: OutboxStore {
    let base: InMemoryOutbox
    private let space: DiskSpace

    init(base: InMemoryOutbox, space: DiskSpace) {
        self.base = base
        self.space = space
    }

    func enqueue(_ message: OutboxMessage, now: Int64) async throws -> OutboxEntry { base.insert(message, now: now) }
    func claimDue(owner: String, now: Int64, limit: Int) async throws -> [OutboxEntry] {
        try await base.claimDue(owner: owner, now: now, limit: limit)
    }
    func expedite(_ id: Int64, owner: String, now: Int64) async throws -> OutboxEntry? {
        try await base.expedite(id, owner: owner, now: now)
    }
    func record(_ id: Int64, claimedBy owner: String, as delivery: OutboxDelivery, outcome: OutboxOutcome) async throws -> Bool {
        try space.check(.recordOutcome)
        return try await base.record(id, claimedBy: owner, as: delivery, outcome: outcome)
    }
    func requeue(_ id: Int64, now: Int64) async throws -> OutboxEntry? { try await base.requeue(id, now: now) }
    func entry(id: Int64) async throws -> OutboxEntry? { try await base.entry(id: id) }
    func list(_ phases: Set<OutboxDelivery.Phase>, before: Int64?, limit: Int) async throws -> [OutboxEntry] {
        try await base.list(phases, before: before, limit: limit)
    }
    func depth() async throws -> Int { try await base.depth() }
}
