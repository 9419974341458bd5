public import Outbox
public import UpServer
extension InMemoryUpIndex {
    /// See `MultipartIndex.createUpload(bucket:key:expiresAt:createdAt:)`.
    public func createUpload(bucket: String, key: String?, expiresAt: Int64, createdAt: Int64) -> MultipartUpload {
        let upload = MultipartUpload(
            id: UpIndexRules.newUploadID(), bucket: bucket, key: key, expiresAt: expiresAt, createdAt: createdAt,
            state: .active)
        state.uploads[upload.id] = upload
        return upload
    }

    /// See `MultipartIndex.upload(id:)`.
    public func upload(id: String) -> MultipartUpload? { state.uploads[id] }

    /// See `MultipartIndex.putPart(_:now:)`.
    public func putPart(_ part: UploadPart, now: Int64) throws -> BlobID? {
        try UpIndexRules.checkPartNumber(part.partNumber)
        guard let upload = state.uploads[part.uploadID], upload.isUsable(now: now) else {
            throw UpIndexError.noSuchUpload
        }
        let old = state.parts[part.uploadID, default: [:]].updateValue(part, forKey: part.partNumber)
        guard let old, old.blob != part.blob else { return nil }
        return state.unreferenced([old.blob]).first
    }

    /// See `MultipartIndex.listParts(uploadID:marker:max:)`.
    public func listParts(uploadID: String, marker: Int, max: Int) -> PartListing {
        let all = (state.parts[uploadID] ?? [:]).values.filter { $0.partNumber > marker }
            .sorted { $0.partNumber < $1.partNumber }
        let page = Array(all.prefix(UpIndexRules.clampMaxParts(max)))
        return PartListing(parts: page, nextMarker: all.count > page.count ? page.last?.partNumber ?? 0 : 0)
    }

    /// See `MultipartIndex.completeUpload(_:parts:object:mode:completion:callback:now:)`.
    public func completeUpload(
        _ id: String, parts: [PartReference], object: StoredObject, mode: PutMode, completion: NewCompletion?,
        callback: OutboxMessage?, now: Int64
    ) throws -> PutObjectOutcome {
        try transaction { state in
            if let completion, let existing = state.completions[completion.key] { return .alreadyCompleted(existing) }
            guard var upload = state.uploads[id], upload.isUsable(now: now) else { throw UpIndexError.noSuchUpload }
            let stored = state.parts[id] ?? [:]
            _ = try UpIndexRules.matchParts(parts, stored: stored, segments: object.segments)
            upload.state = .completed
            state.uploads[id] = upload
            state.parts[id] = nil
            return try Self.store(
                object, mode: mode, completion: completion, callback: callback,
                extraReleased: stored.values.map(\.blob), outbox: outbox, in: &state)
        }
    }

    /// See `MultipartIndex.abortUpload(_:)`.
    public func abortUpload(_ id: String) throws -> [BlobID] {
        try end(id, as: .aborted)
    }

    /// See `MultipartIndex.retireUpload(_:recording:)`.
    public func retireUpload(_ id: String, recording completion: Completion) throws -> [BlobID] {
        let blobs = try end(id, as: .completed)
        if state.completions[completion.key] == nil { state.completions[completion.key] = completion }
        return blobs
    }

    /// Moves an active upload to `newState` and drops its parts; returns the parts' blobs that
    /// nothing else references. Throws `UpIndexError.noSuchUpload` unless the upload is active.
    private func end(_ id: String, as newState: MultipartUpload.State) throws -> [BlobID] {
        guard var upload = state.uploads[id], upload.state == .active else { throw UpIndexError.noSuchUpload }
        upload.state = newState
        state.uploads[id] = upload
        let blobs = (state.parts.removeValue(forKey: id) ?? [:]).values.map(\.blob)
        return state.unreferenced(blobs)
    }
}
