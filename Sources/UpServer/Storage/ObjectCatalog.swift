/// What the management API (Qiniu's rs/rsf: list, copy, move, chgm, deleteAfterDays) asks of the
/// index beyond `ObjectIndex`. Kept apart so a store that only takes uploads need not have it.
///
/// Keys are ordered by their UTF-8 bytes (SQLite's BINARY collation; `COLLATE "C"` on
/// PostgreSQL), which is code-point order. Every implementation passes the same contract suite
/// (`Tests/UpServerTests/Storage/ObjectCatalogContractTests.swift`): `SQLiteUpIndex`,
/// `PostgresUpIndex` and the in-memory twin `InMemoryUpIndex`.
///
/// Blobs are shared, never copied: a copy names the same blobs as its source (its `segments`
/// rows), and a blob is released only when no segment, block or part row names it any more (the
/// same "is it referenced?" lookup every replace and delete already makes, `segments_blob`).
public protocol ObjectCatalog: Sendable {
    /// Objects of `bucket` with `from <= key` (and `key < below` when given), in key order, at
    /// most `limit`.
    func listObjects(bucket: String, from: String, below: String?, limit: Int) async throws -> [StoredObject]

    /// Stores the object under `source` also under `destination` in one transaction — same
    /// bytes (blobs), hash, type and metadata — and, for a move, removes `source`.
    ///
    /// - Parameters:
    ///   - putTime: The copy's `putTime`; `nil` keeps the source's (a move).
    ///   - removeSource: `true` for a move.
    /// - Returns: `nil` if there is no object under `source`; else the blobs nothing references
    ///   any more (those of an object replaced at `destination`): remove them from the
    ///   `BlockStore` after this returns.
    /// - Throws: `UpIndexError.objectExists` for `.insertOnly` on a taken destination (also when
    ///   it is the source itself). Nothing is written when anything throws.
    func copyObject(
        from source: ObjectName, to destination: ObjectName, mode: PutMode, putTime: Int64?, removeSource: Bool
    ) async throws -> [BlobID]?

    /// Applies `change` to the object under `name` (its bytes and `version` stay).
    ///
    /// - Returns: The object after the change; `nil` if there is none.
    func changeObject(_ name: ObjectName, _ change: ObjectChange) async throws -> StoredObject?
}

/// A bucket and a key.
public struct ObjectName: Sendable, Hashable, CustomStringConvertible {
    /// The bucket.
    public var bucket: String
    /// The key.
    public var key: String

    /// Creates a name.
    public init(bucket: String, key: String) {
        self.bucket = bucket
        self.key = key
    }

    /// `bucket:key`, for logs.
    public var description: String { "\(bucket):\(key)" }
}

/// A change to an object's attributes (Qiniu's `chgm` and `deleteAfterDays`).
public enum ObjectChange: Sendable, Equatable {
    /// A new MIME type (`nil`: keep it) and metadata merged into the object's (`x-qn-meta-*`
    /// names as sent; a name already present gets the new value).
    case mimeAndMetadata(mimeType: String?, metadata: [String: String])
    /// Expire the object `days` after its `putTime`; `nil` removes the rule.
    case deleteAfterDays(Int?)

    /// `object` with the change applied: the one place both implementations take it from.
    public func applied(to object: StoredObject) -> StoredObject {
        var changed = object
        switch self {
        case .mimeAndMetadata(let mimeType, let metadata):
            if let mimeType { changed.mimeType = mimeType }
            changed.metadata.merge(metadata) { _, new in new }
        case .deleteAfterDays(let days):
            changed.deleteAfterDays = days
        }
        return changed
    }
}

extension StoredObject {
    /// What a copy or move of this object to `destination` writes, the same decision for every
    /// `ObjectCatalog`: this object under the new name (with `putTime` when given), or nil when
    /// the destination is the object itself (nothing to write).
    ///
    /// - Throws: `UpIndexError.objectExists` for an insert-only copy onto itself.
    public func copied(to destination: ObjectName, mode: PutMode, putTime: Int64?) throws -> StoredObject? {
        if name == destination {
            if mode == .insertOnly { throw UpIndexError.objectExists }
            return nil
        }
        var copy = self
        copy.bucket = destination.bucket
        copy.key = destination.key
        if let putTime { copy.putTime = putTime }
        return copy
    }
}

extension StoredObject {
    /// Seconds in one of `deleteAfterDays`' days.
    public static let secondsPerDay: Int64 = 86_400

    /// When the lifecycle rule deletes the object: `putTime + deleteAfterDays × 1 day` (Unix
    /// seconds), `nil` without a rule. Qiniu deletes "within the day" after that; the sweeper
    /// deletes at its first pass at or after it.
    public var expiresAt: Int64? {
        deleteAfterDays.map { putTime &+ Int64($0) &* Self.secondsPerDay }
    }

    /// The object's name.
    public var name: ObjectName { ObjectName(bucket: bucket, key: key) }
}
