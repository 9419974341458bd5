public import Foundation
import NativeOS
import Synchronization
import UpCore

/// The production `BlockStore`: one file per blob at `<dataDir>/blobs/<first 2 hex>/<id>`, except
/// small blobs, which are rows of `<dataDir>/blobs/inline.sqlite3` (``InlineBlobs``).
///
/// A blob is a row while it holds at most ``smallBlobLimit`` bytes, and a file once a write takes
/// it past that, for good. ``create()`` only names a blob (in memory; ``inventory()`` lists the
/// name all the same); its first write makes the row or the file. Every write to a row is
/// committed before it returns (rows written together share the commit), so a row needs no
/// ``sync(_:)``; a file's bytes are made durable by ``sync(_:)`` as always. A name never written
/// is forgotten with the process, which loses nothing: no row of the index names a blob before
/// its bytes are written. A row that grows past the limit is moved into a file: the row stays
/// the blob until that file is written and fsynced (reads and writes look for a row first), so a
/// crash half-way through the move loses nothing.
///
/// Paths come from `BlobID` only (random hex), never from a bucket or key, so no user input
/// reaches the file system. Files are created in place, never through temporary files, so a
/// crash leaves no `*.tmp` behind: at worst an orphan blob, which the orphan sweep finds with
/// `inventory()`.
///
/// Writing goes through `NativeFile` (positioned writes straight from the caller's array, no
/// `Data` copy, no seek), and a blob being written keeps its descriptor open across appends in a
/// small bounded cache (``openWriterLimit``): an open/fstat/close per 256 KiB append was a
/// fifth of the syscalls of an upload. The descriptor is dropped when the blob is synced (a block
/// completes), removed, or evicted; a dropped one closes when its last user is done. Reads still
/// use Foundation per call: they are rare (rebuilds, downloads) and hold nothing open.
public final class FileBlockStore: BlockStore {
    /// Most blobs kept open for writing at once; more concurrent blocks reopen their file.
    public static let openWriterLimit = 128
    /// The default of ``smallBlobLimit``: 64 KiB.
    public static let defaultSmallBlobLimit = 64 << 10
    /// Most bytes a blob holds as a row (`InlineBlobs`); nil: every blob is a file.
    public let smallBlobLimit: Int?
    /// Commits the rows' writes shared with others (tests, metrics).
    public var inlineGroupCommits: Int { inline.groupCommits }
    /// `<dataDir>/blobs`.
    public let directory: URL
    /// Descriptors of blobs being written. Entries are only a shortcut: eviction never breaks a
    /// writer, which holds its own reference.
    let writers = Mutex<[BlobID: NativeFile]>([:])
    /// Blobs named by ``create()`` and not written yet (no file, no row), with when they were
    /// named: ``inventory()`` lists them, so the orphan sweep forgets the ones a request dropped.
    let unwritten = Mutex<[BlobID: Double]>([:])
    /// The small sealed blobs.
    let inline: InlineBlobs

    /// Opens the store under `dataDirectory`, creating `blobs/` (and any missing parent) if needed.
    ///
    /// - Parameters:
    ///   - dataDirectory: The up-server's data directory.
    ///   - smallBlobLimit: Most bytes a blob holds as a row; nil: no new rows (existing ones are
    ///     still read, and moved into a file when written to).
    /// - Throws: `BlockStoreError.io` if the directory cannot be created.
    public init(dataDirectory: URL, smallBlobLimit: Int? = FileBlockStore.defaultSmallBlobLimit) throws {
        self.smallBlobLimit = smallBlobLimit
        directory = dataDirectory.appendingPathComponent("blobs", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw BlockStoreError.io(nil, reason: "cannot create \(directory.path): \(error)")
        }
        do {
            inline = try InlineBlobs(path: directory.appendingPathComponent("inline.sqlite3").path)
        } catch {
            throw BlockStoreError.io(nil, reason: "cannot open \(directory.path)/inline.sqlite3: \(error)")
        }
    }

    /// The file that holds `blob`.
    public func url(of blob: BlobID) -> URL {
        directory.appendingPathComponent(blob.shard, isDirectory: true)
            .appendingPathComponent(blob.hex, isDirectory: false)
    }

    /// See `BlockStore.create()`: a new name, nothing on disk yet (see the type's overview).
    public func create() throws -> BlobID {
        let blob = BlobID.random()
        let now = Date().timeIntervalSince1970
        unwritten.withLock { $0[blob] = now }
        return blob
    }

    /// Creates `blob`'s file at its first write. The shard directory is fsynced here, once per
    /// file, so the blob's name is durable before any of its bytes can be acknowledged and
    /// ``sync(_:)`` needs only the file's fsync.
    ///
    /// The file is created first and its shard directory only when that fails for want of it:
    /// the shards exist after the first few hundred blobs, and asking for one that exists was an
    /// `mkdir` per blob (perf put it at about 2 % of up-server's CPU on a 1 GiB v1 upload; the
    /// CPU totals did not move beyond their noise). A new shard's own name is made durable too.
    func makeFile(_ blob: BlobID) throws -> NativeFile {
        let file = url(of: blob)
        let shard = file.deletingLastPathComponent()
        let writer = try io(blob) { () throws -> NativeFile in
            do {
                return try NativeFile(path: file.path, create: true, directWrites: true)
            } catch let error as NativeFileError where error.isNotFound {
                try makeShard(shard, for: blob)
                return try NativeFile(path: file.path, create: true, directWrites: true)
            }
        }
        do {
            try io(blob) { try NativeFile.syncDirectory(shard.path) }
        } catch {
            // Nobody knows this file yet: do not leave an empty orphan behind.
            try? FileManager.default.removeItem(at: file)
            throw error
        }
        return writer
    }

    /// Creates the shard directory `shard` (and `blobs/` if it went missing) and makes its name
    /// durable, as ``makeFile(_:)`` does for a blob's. Runs inside ``io(_:_:)``, which turns a full
    /// disk into `UpError(.insufficientStorage)`; any other failure is named here.
    private func makeShard(_ shard: URL, for blob: BlobID) throws {
        do {
            try FileManager.default.createDirectory(at: shard, withIntermediateDirectories: true)
            try NativeFile.syncDirectory(directory.path)
        } catch where !InsufficientStorage.isNoSpace(error) {
            throw BlockStoreError.io(blob, reason: "cannot create shard directory \(shard.path): \(error)")
        }
    }

    /// See `BlockStore.append(_:to:at:)`.
    public func append(_ bytes: [UInt8], to blob: BlobID, at expectedOffset: Int64) throws -> Int64 {
        if let end = try appendToRow(bytes, to: blob, at: expectedOffset) { return end }
        guard let writer = try self.writer(for: blob) else { throw BlockStoreError.notFound(blob) }
        return try io(blob) {
            let length = try writer.status().size
            if length < expectedOffset {
                throw BlockStoreError.missingBytes(blob, expected: expectedOffset, actual: length)
            }
            if length > expectedOffset {
                // The tail of a write that was never acknowledged (crash before the reply).
                try writer.truncate(to: expectedOffset)
            }
            do {
                if !bytes.isEmpty { try writer.write(bytes, at: expectedOffset) }
            } catch {
                // A short write (ENOSPC half-way) leaves bytes nobody acknowledged: cut them off
                // now, so the blob stays at what the index says and a full disk gets them back.
                try? writer.truncate(to: expectedOffset)
                throw error
            }
            return expectedOffset + Int64(bytes.count)
        }
    }

    /// See `BlockStore.sync(_:)`: the file's fsync. Its name was made durable by ``makeFile(_:)``
    /// (a file whose data is durable but whose directory entry is not can vanish in a power cut).
    /// The blob's descriptor is let go: a synced blob is a completed block or part. A row is
    /// durable already; a blob never written becomes an empty row (or file).
    public func sync(_ blob: BlobID) throws {
        if unwritten.withLock({ $0[blob] != nil }) {
            _ = try append([], to: blob, at: 0)
            if smallBlobLimit != nil { return }
        }
        guard let writer = try self.writer(for: blob, movingRows: false) else { return }
        try io(blob) { try writer.sync() }
        _ = writers.withLock { $0.removeValue(forKey: blob) }
        inline.deleteForgotten()  // rows removed while the disk was full, now that a write got room
    }

    /// See `BlockStore.length(of:)`.
    public func length(of blob: BlobID) throws -> Int64 {
        if let length = try lengthWithoutFile(of: blob) { return length }
        let handle = try open(blob, forWriting: false)
        defer { try? handle.close() }
        return try io(blob) { Int64(try handle.seekToEnd()) }
    }

    /// See `BlockStore.read(_:range:)`.
    public func read(_ blob: BlobID, range: Range<Int64>) throws -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(range.count))
        try forEachChunk(of: blob, range: range, size: 1 << 20) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// See `BlockStore.forEachChunk(of:range:size:_:)`.
    public func forEachChunk(
        of blob: BlobID, range: Range<Int64>?, size: Int, _ body: ([UInt8]) throws -> Void
    ) throws {
        precondition(size > 0, "chunk size must be positive")
        if let bytes = try bytesWithoutFile(of: blob) {
            return try Self.forEachChunk(of: bytes, blob: blob, range: range, size: size, body)
        }
        let handle = try open(blob, forWriting: false)
        defer { try? handle.close() }
        let length = try io(blob) { Int64(try handle.seekToEnd()) }
        let range = range ?? 0..<length
        guard range.lowerBound >= 0, range.upperBound <= length else {
            throw BlockStoreError.outOfRange(blob, requested: range, length: length)
        }
        try io(blob) { try handle.seek(toOffset: UInt64(range.lowerBound)) }
        var remaining = range.count
        while remaining > 0 {
            let want = Int(min(Int64(size), Int64(remaining)))
            let data = try io(blob) { try handle.read(upToCount: want) } ?? Data()
            guard !data.isEmpty else {
                // The file shrank under us: only a second writer or a damaged disk does that.
                throw BlockStoreError.outOfRange(blob, requested: range, length: range.upperBound - Int64(remaining))
            }
            remaining -= data.count
            try body([UInt8](data))
        }
    }

    /// See `BlockStore.remove(_:)`.
    public func remove(_ blob: BlobID) throws {
        _ = unwritten.withLock { $0.removeValue(forKey: blob) }
        _ = writers.withLock { $0.removeValue(forKey: blob) }
        let file = url(of: blob)
        if FileManager.default.fileExists(atPath: file.path) {
            try io(blob) { try FileManager.default.removeItem(at: file) }
        }
        try io(blob) { try inline.remove(blob) }
    }

    /// See `BlockStore.inventory()`: the files' mtimes, the rows' write times (a blob in both,
    /// left by a move into a file cut short, is listed once, as its row) and the unwritten
    /// blobs' naming times. Names that are not blob ids, or sit in the wrong shard, are skipped:
    /// they are not ours to delete. So is a file removed while the directory is read.
    public func inventory() throws -> [ListedBlob] {
        let rows = try io(nil) { try inline.inventory() }
        let inRows = Set(rows.map(\.id))
        let files = try fileInventory().filter { !inRows.contains($0.id) }
        let named = unwritten.withLock { $0.map { ListedBlob(id: $0.key, modifiedAt: $0.value) } }
        return (files + rows + named).sorted { $0.id < $1.id }
    }

    private func fileInventory() throws -> [ListedBlob] {
        let manager = FileManager.default
        let shards = try io(nil) { try manager.contentsOfDirectory(atPath: directory.path) }
        var blobs: [ListedBlob] = []
        for shard in shards where shard.utf8.count == 2 {
            let names = try io(nil) {
                try manager.contentsOfDirectory(atPath: directory.appendingPathComponent(shard).path)
            }
            for blob in names.compactMap(BlobID.init(hex:)) where blob.shard == shard {
                guard let attributes = try? manager.attributesOfItem(atPath: url(of: blob).path),
                    let modified = attributes[.modificationDate] as? Date
                else { continue }
                blobs.append(ListedBlob(id: blob, modifiedAt: modified.timeIntervalSince1970))
            }
        }
        return blobs
    }

    /// The blob's cached descriptor, or a newly opened one; the file is created at an unwritten
    /// blob's first write. A row blob is moved into a file when `movingRows` (an append that takes
    /// it past the limit), and is nil otherwise. A cached descriptor whose file was unlinked
    /// (another store instance removed the blob) is `notFound`, as a fresh open would be.
    private func writer(for blob: BlobID, movingRows: Bool = true) throws -> NativeFile? {
        if let cached = writers.withLock({ $0[blob] }) {
            if try io(blob, { try cached.status().linked }) { return cached }
            _ = writers.withLock { $0.removeValue(forKey: blob) }
            throw BlockStoreError.notFound(blob)
        }
        if let named = unwritten.withLock({ $0.removeValue(forKey: blob) }) {
            do {
                let writer = try makeFile(blob)
                remember(writer, for: blob)
                return writer
            } catch {
                unwritten.withLock { $0[blob] = named }
                throw error
            }
        }
        if let bytes = try row(blob) {
            guard movingRows else { return nil }
            return try moveIntoFile(blob, bytes)
        }
        let writer: NativeFile
        do {
            writer = try NativeFile(path: url(of: blob).path, directWrites: true)
        } catch where error.isNotFound {
            throw BlockStoreError.notFound(blob)
        } catch {
            throw BlockStoreError.io(blob, reason: "\(error)")
        }
        remember(writer, for: blob)
        return writer
    }

    func remember(_ writer: NativeFile, for blob: BlobID) {
        writers.withLock { writers in
            // Any victim will do: a blob still being written just reopens its file.
            if writers.count >= Self.openWriterLimit, let victim = writers.keys.first { writers[victim] = nil }
            writers[blob] = writer
        }
    }

    private func open(_ blob: BlobID, forWriting: Bool) throws -> FileHandle {
        let file = url(of: blob)
        guard FileManager.default.fileExists(atPath: file.path) else { throw BlockStoreError.notFound(blob) }
        return try io(blob) {
            forWriting ? try FileHandle(forUpdating: file) : try FileHandle(forReadingFrom: file)
        }
    }

    /// Runs `body`, turning a full disk (`ENOSPC`/`EDQUOT`) into `UpError(.insufficientStorage)`
    /// and other file system errors into `BlockStoreError.io`, and letting ours through.
    func io<T>(_ blob: BlobID?, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as BlockStoreError {
            throw error
        } catch {
            if InsufficientStorage.isNoSpace(error) {
                throw UpError.insufficientStorage("blob \(blob?.hex ?? "-"): \(error)")
            }
            throw BlockStoreError.io(blob, reason: "\(error)")
        }
    }
}
