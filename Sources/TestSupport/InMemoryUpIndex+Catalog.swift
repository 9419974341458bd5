public import UpServer

/// `ObjectCatalog` and the lifecycle sweep of `SweepIndex`, the twins of
/// `SQLiteUpIndex+Catalog.swift`.
extension InMemoryUpIndex: ObjectCatalog {
    /// See `ObjectCatalog.listObjects(bucket:from:below:limit:)`: keys in UTF-8 byte order, as
    /// SQLite's BINARY collation orders them.
    public func listObjects(bucket: String, from: String, below: String?, limit: Int) -> [StoredObject] {
        let low = Array(from.utf8), high = below.map { Array($0.utf8) }
        return state.objects.filter { name, _ in
            name.bucket == Array(bucket.utf8) && !name.key.lexicographicallyPrecedes(low)
                && (high.map { name.key.lexicographicallyPrecedes($0) } ?? true)
        }
        .sorted { $0.key.key.lexicographicallyPrecedes($1.key.key) }
        .prefix(max(limit, 0)).map(\.value)
    }

    /// See `ObjectCatalog.copyObject(from:to:mode:putTime:removeSource:)`.
    public func copyObject(
        from source: ObjectName, to destination: ObjectName, mode: PutMode, putTime: Int64?, removeSource: Bool
    ) throws -> [BlobID]? {
        let outbox = self.outbox
        return try transaction { state in
            guard let original = state.objects[Name(source.bucket, source.key)] else { return nil }
            guard let object = try original.copied(to: destination, mode: mode, putTime: putTime) else { return [] }
            if removeSource { state.objects[Name(source.bucket, source.key)] = nil }
            let outcome = try Self.store(
                object, mode: mode, completion: nil, callback: nil, extraReleased: [], outbox: outbox, in: &state)
            guard case .stored(_, let released, _) = outcome else { return [] }
            return released
        }
    }

    /// See `ObjectCatalog.changeObject(_:_:)`.
    public func changeObject(_ name: ObjectName, _ change: ObjectChange) -> StoredObject? {
        guard let old = state.objects[Name(name.bucket, name.key)] else { return nil }
        let new = change.applied(to: old)
        state.objects[Name(name.bucket, name.key)] = new
        return new
    }

    /// See `SweepIndex.deleteExpiredObjects(now:limit:)`.
    public func deleteExpiredObjects(now: Int64, limit: Int) -> ExpiredObjects {
        let due = state.objects.values.compactMap { object in object.expiresAt.map { (object, $0) } }
            .filter { $0.1 <= now }
            .sorted { a, b in
                if a.1 != b.1 { return a.1 < b.1 }
                if a.0.bucket != b.0.bucket { return a.0.bucket.utf8.lexicographicallyPrecedes(b.0.bucket.utf8) }
                return a.0.key.utf8.lexicographicallyPrecedes(b.0.key.utf8)
            }
            .prefix(max(limit, 0)).map(\.0)
        var blobs: [BlobID] = []
        for object in due {
            state.objects[Name(object.bucket, object.key)] = nil
            blobs += object.segments.map(\.blob)
        }
        return ExpiredObjects(names: due.map(\.name), blobs: state.unreferenced(blobs))
    }
}
