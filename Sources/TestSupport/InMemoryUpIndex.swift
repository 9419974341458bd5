public import Outbox
public import UpServer
/// The up-server's index in memory: the twin of `SQLiteUpIndex` (every role — `BlockIndex`,
/// `MultipartIndex`, `ObjectIndex`, `SweepIndex` — and the callback outbox, ``outbox``) for handler
/// tests, checked by the same contract suites; nothing survives the process.
///
/// An actor, so calls are serialized the way the SQLite index's transactions are. A change that
/// touches several tables works on a copy of the state and assigns it back only at the end
/// (`transaction`), so a throw half-way leaves nothing behind — the same all-or-nothing the
/// suite checks for SQLite.
public actor InMemoryUpIndex: BlockIndex, ObjectIndex, MultipartIndex, SweepIndex {
    /// Bucket and key compared as UTF-8 bytes, as SQLite compares TEXT (Swift's `==` on `String`
    /// would merge canonically equivalent keys that are different keys on the wire).
    struct Name: Hashable {
        let bucket: [UInt8]
        let key: [UInt8]
        init(_ bucket: String, _ key: String) {
            self.bucket = Array(bucket.utf8)
            self.key = Array(key.utf8)
        }
    }

    struct State {
        var blocks: [BlobID: BlockRecord] = [:]
        var objects: [Name: StoredObject] = [:]
        var completions: [CompletionKey: Completion] = [:]
        var uploads: [String: MultipartUpload] = [:]
        var parts: [String: [Int: UploadPart]] = [:]

        func isReferencedByObject(_ blob: BlobID) -> Bool {
            objects.values.contains { $0.segments.contains { $0.blob == blob } }
        }

        /// The subset of `blobs` that no object, block or part names.
        func unreferenced(_ blobs: [BlobID]) -> [BlobID] {
            let parts = Set(self.parts.values.flatMap { $0.values.map(\.blob) })
            return Array(Set(blobs)).sorted().filter {
                !isReferencedByObject($0) && blocks[$0] == nil && !parts.contains($0)
            }
        }
    }

    var state = State()

    /// The callback outbox (`SQLiteUpIndex.outbox`'s twin); objects enqueue into it as the last
    /// step of their all-or-nothing change.
    public nonisolated let outbox = InMemoryOutbox()

    /// Creates an empty index.
    public init() {}

    /// Runs `body` on a copy of the state and keeps the copy only if `body` returns.
    func transaction<T>(_ body: (inout State) throws -> T) rethrows -> T {
        var draft = state
        let result = try body(&draft)
        state = draft
        return result
    }

    // MARK: Blocks

    /// See `BlockIndex.createBlock(_:blockSize:received:crc32:sha1:sniffedType:expiresAt:createdAt:)`.
    public func createBlock(
        _ blob: BlobID, blockSize: Int64, received: Int64, crc32: UInt32, sha1: [UInt8]?, sniffedType: String??,
        expiresAt: Int64, createdAt: Int64
    ) throws -> BlockRecord {
        let record = try UpIndexRules.newBlock(
            blob, blockSize: blockSize, received: received, crc32: crc32, sha1: sha1, sniffedType: sniffedType,
            expiresAt: expiresAt, createdAt: createdAt)
        guard state.blocks[blob] == nil else { throw UpIndexError.invalidArgument("block \(blob) exists") }
        state.blocks[blob] = record
        return record
    }

    /// See `BlockIndex.advanceBlock(_:from:to:crc32:sha1:)`.
    public func advanceBlock(
        _ blob: BlobID, from expectedOffset: Int64, to newOffset: Int64, crc32: UInt32, sha1: [UInt8]?
    ) throws -> Bool {
        guard var record = state.blocks[blob] else { return false }
        try UpIndexRules.checkAdvance(record, from: expectedOffset, to: newOffset, sha1: sha1)
        guard record.offset == expectedOffset else { return false }
        record.offset = newOffset
        record.crc32 = crc32
        record.sha1 = sha1
        state.blocks[blob] = record
        return true
    }

    /// See `BlockIndex.rewindBlock(_:from:to:crc32:)`.
    public func rewindBlock(_ blob: BlobID, from currentOffset: Int64, to offset: Int64, crc32: UInt32) -> Bool {
        guard offset >= 0, offset < currentOffset, var record = state.blocks[blob], record.sha1 == nil,
            record.offset == currentOffset
        else { return false }
        record.offset = offset
        record.crc32 = crc32
        state.blocks[blob] = record
        return true
    }

    /// See `BlockIndex.block(_:)`.
    public func block(_ blob: BlobID) -> BlockRecord? { state.blocks[blob] }

    // MARK: Objects

    /// See `ObjectIndex.putObject(_:mode:completion:callback:)`.
    public func putObject(
        _ object: StoredObject, mode: PutMode, completion: NewCompletion?, callback: OutboxMessage?
    ) throws -> PutObjectOutcome {
        if let completion, let existing = state.completions[completion.key] { return .alreadyCompleted(existing) }
        return try transaction { state in
            try Self.store(
                object, mode: mode, completion: completion, callback: callback, extraReleased: [], outbox: outbox,
                in: &state)
        }
    }

    /// The body of `putObject`, shared with `completeUpload`.
    static func store(
        _ object: StoredObject, mode: PutMode, completion: NewCompletion?, callback: OutboxMessage?,
        extraReleased: [BlobID], outbox: InMemoryOutbox, in state: inout State
    ) throws -> PutObjectOutcome {
        let name = Name(object.bucket, object.key)
        let old = state.objects[name]
        if mode == .insertOnly, old != nil { throw UpIndexError.objectExists }
        var stored = object
        stored.version = (old?.version ?? 0) + 1
        state.objects[name] = stored
        // Mirrors the SQLite table's CHECK: a message without a lease is refused.
        if let callback, callback.leaseSeconds <= 0 { throw UpIndexError.invalidArgument("outbox lease must be > 0") }
        let released = state.unreferenced((old?.segments.map(\.blob) ?? []) + extraReleased)
        // Last: nothing after it can fail, so the outbox never holds an entry for a rolled-back object.
        let entry = callback.map { outbox.insert($0, now: object.putTime) }
        if let completion {
            state.completions[completion.key] = Completion(
                key: completion.key, objectKey: object.key, etag: object.etag, result: nil,
                expiresAt: completion.expiresAt, outboxID: entry?.id)
        }
        return .stored(object: stored, releasedBlobs: released, callback: entry)
    }
    /// See `ObjectIndex.object(bucket:key:)`.
    public func object(bucket: String, key: String) -> StoredObject? { state.objects[Name(bucket, key)] }

    /// See `ObjectIndex.deleteObject(bucket:key:)`.
    public func deleteObject(bucket: String, key: String) -> [BlobID]? {
        guard let old = state.objects.removeValue(forKey: Name(bucket, key)) else { return nil }
        return state.unreferenced(old.segments.map(\.blob))
    }

    /// See `ObjectIndex.completion(_:)`.
    public func completion(_ key: CompletionKey) -> Completion? { state.completions[key] }

    /// See `ObjectIndex.recordCompletionResult(_:result:)`.
    public func recordCompletionResult(_ key: CompletionKey, result: String) -> String? {
        guard var completion = state.completions[key] else { return nil }
        if completion.result == nil {
            completion.result = result
            state.completions[key] = completion
        }
        return completion.result
    }

    // MARK: Garbage collection

    /// Block rows with `expiresAt <= now`.
    func expiredBlocks(now: Int64) -> [BlockRecord] {
        state.blocks.values.filter { $0.expiresAt <= now }.sorted { $0.blob < $1.blob }
    }

    /// Upload rows with `expiresAt <= now`, in any state.
    func expiredUploads(now: Int64) -> [MultipartUpload] {
        state.uploads.values.filter { $0.expiresAt <= now }.sorted { $0.id < $1.id }
    }

    /// See `SweepIndex.sweepExpired(now:)`.
    public func sweepExpired(now: Int64) -> SweepPlan {
        let uploads = expiredUploads(now: now).map { ($0, (state.parts[$0.id] ?? [:]).values.map(\.blob)) }
        let plan = SweepPlan.make(
            now: now, blocks: expiredBlocks(now: now), uploads: uploads,
            isReferencedByObject: state.isReferencedByObject)
        for blob in plan.blockRows { state.blocks[blob] = nil }
        for id in plan.uploadRows {
            state.uploads[id] = nil
            state.parts[id] = nil
        }
        state.completions = state.completions.filter { $0.value.expiresAt > now }
        return plan
    }

    /// See `SweepIndex.knownBlobs()`.
    public func knownBlobs() -> Set<BlobID> {
        Set(state.blocks.keys)
            .union(state.objects.values.flatMap { $0.segments.map(\.blob) })
            .union(state.parts.values.flatMap { $0.values.map(\.blob) })
    }
}
