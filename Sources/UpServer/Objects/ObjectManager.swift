import Basics
import UpCore

/// Carries out one `ManagementCommand` (Qiniu's rs operations) against the index — the one place
/// a single request (`ManagementController`) and each `op` of a `/batch` (`BatchController`) go
/// through, so both give the same answer and the same Qiniu code:
///
/// - a bucket that is not configured: `631 no such bucket`;
/// - no object under the (source) key: `612 no such file or directory`;
/// - move/copy onto a taken key without `force/true`: `614 file exists`.
///
/// Blobs an operation released (a deleted object's, one replaced by a forced copy) are removed
/// after the index committed; a blob a copy still names stays (see `ObjectCatalog`).
struct ObjectManager: Sendable {
    let objects: any ObjectIndex
    let catalog: any ObjectCatalog
    let blobs: any BlockStore
    /// Buckets that exist (`UpServerConfiguration.buckets`).
    let buckets: Set<String>
    let clock: any WallClock
    let logger: Logger

    /// Runs `command`.
    ///
    /// - Returns: The answer's data: the attributes for `stat`, `nil` for the others (Qiniu
    ///   answers them with an empty 200).
    /// - Throws: `UpError` 631, 612 or 614 as above; the index's and store's own errors.
    func run(_ command: ManagementCommand) async throws -> JSONValue? {
        switch command {
        case .stat(let entry):
            return .object(Self.attributes(of: try await object(entry)))
        case .delete(let entry):
            let name = try checked(entry)
            guard let released = try await objects.deleteObject(bucket: name.bucket, key: name.key) else {
                throw UpError(.noSuchFile, detail: name.description)
            }
            await blobs.release(released, what: "blobs of a deleted object", logger: logger)
        case .move(let source, let destination, let force):
            try await copy(source, destination, force: force, move: true)
        case .copy(let source, let destination, let force):
            try await copy(source, destination, force: force, move: false)
        case .changeMime(let entry, let mimeType, let metadata):
            try await change(entry, .mimeAndMetadata(mimeType: mimeType, metadata: metadata))
        case .deleteAfterDays(let entry, let days):
            try await change(entry, .deleteAfterDays(days))
        }
        return nil
    }

    /// The object under `entry`: 631 for an unknown bucket, 612 when there is none.
    func object(_ entry: ManagementCommand.Entry) async throws -> StoredObject {
        let name = try checked(entry)
        guard let object = try await objects.object(bucket: name.bucket, key: name.key) else {
            throw UpError(.noSuchFile, detail: name.description)
        }
        return object
    }

    /// Qiniu's stat shape (also each item of a listing, with `key` in front): `putTime` in units
    /// of 100 ns, `type` the storage class, `x-qn-meta` when there is metadata, `expiration`
    /// (Unix seconds) when a lifecycle rule is set.
    static func attributes(of object: StoredObject) -> [(key: String, value: JSONValue)] {
        var members: [(key: String, value: JSONValue)] = [
            ("fsize", .int(object.fsize)), ("hash", .string(object.etag)), ("mimeType", .string(object.mimeType)),
            ("putTime", .int(object.putTime &* 10_000_000)), ("type", .int(Int64(object.fileType))),
        ]
        if !object.metadata.isEmpty {
            let metadata = object.metadata.sorted { $0.key < $1.key }.map { (key: $0.key, value: JSONValue.string($0.value)) }
            members.append(("x-qn-meta", .object(metadata)))
        }
        if let expiresAt = object.expiresAt { members.append(("expiration", .int(expiresAt))) }
        return members
    }

    private func copy(
        _ source: ManagementCommand.Entry, _ destination: ManagementCommand.Entry, force: Bool, move: Bool
    ) async throws {
        let from = try checked(source), to = try checked(destination)
        let released: [BlobID]?
        do {
            // A copy is a new upload of the same bytes (its putTime is now); a move keeps everything.
            released = try await catalog.copyObject(
                from: from, to: to, mode: force ? .replace : .insertOnly, putTime: move ? nil : clock.unixSeconds,
                removeSource: move)
        } catch UpIndexError.objectExists {
            throw UpError(.fileExists, detail: to.description)
        }
        guard let released else { throw UpError(.noSuchFile, detail: from.description) }
        await blobs.release(released, what: "blobs of an object replaced by a copy", logger: logger)
    }

    private func change(_ entry: ManagementCommand.Entry, _ change: ObjectChange) async throws {
        let name = try checked(entry)
        guard try await catalog.changeObject(name, change) != nil else {
            throw UpError(.noSuchFile, detail: name.description)
        }
    }

    /// The entry's name, 631 unless its bucket is configured.
    private func checked(_ entry: ManagementCommand.Entry) throws(UpError) -> ObjectName {
        guard buckets.contains(entry.bucket) else { throw UpError(.noSuchBucket, detail: entry.bucket) }
        return ObjectName(bucket: entry.bucket, key: entry.key)
    }
}
