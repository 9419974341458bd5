import Foundation

/// Reads, writes and locks one checkpoint file.
///
/// Writes are atomic: Foundation's `.atomic` write puts the JSON in a temporary file next to
/// `<path>` and renames it over `<path>` (rename is atomic on POSIX file systems), then the file
/// is fsynced; a crash leaves the old or the new checkpoint, never a torn one (and a torn one
/// would be reported as corrupt and ignored).
///
/// Locking: one checkpoint path serves one upload at a time. ``lock()`` creates
/// `<path>.lock` exclusively (`Data.write(options: .withoutOverwriting)`, i.e. `O_CREAT|O_EXCL`)
/// with `<pid> <random>` inside. An existing lock is stale — removed and taken — when its pid is
/// not a live process (`kill(pid, 0)` answers `ESRCH`: the uploader crashed or was killed) or
/// when it is unreadable and older than a minute (a crash between create and write). A lock
/// held by a live process, including another upload of this process, makes the call fail with
/// ``UploadError/Kind/checkpoint`` ("in use by another upload"); a lock that cannot be created
/// (permission denied, read-only file system) fails with the same kind and says so. (A pid reused by an unrelated process after a crash keeps
/// the lock until that process ends; `up-cli abort` removes it by hand.)
struct CheckpointStore: Sendable {
    /// The checkpoint file.
    let path: String
    /// Where the lock lives.
    var lockPath: String { path + ".lock" }
    private var temporaryPath: String { path + ".tmp" }

    /// Loads the checkpoint: nil when there is none, `.failure` when it is corrupt.
    func load() -> Result<Checkpoint, Checkpoint.Invalidity>? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            return .failure(.corrupt("cannot read \(path)"))
        }
        return Checkpoint.decode(data)
    }

    /// Writes `checkpoint` atomically and durably.
    func save(_ checkpoint: Checkpoint) throws(UploadError) {
        let data = checkpoint.encoded()
        try createDirectory()
        do {
            // `.atomic`: Foundation writes a temporary file in the same directory and rename(2)s
            // it over the checkpoint; the fsync after makes the new content durable.
            let url = URL(fileURLWithPath: path)
            try data.write(to: url, options: .atomic)
            let handle = try FileHandle(forUpdating: url)
            try handle.synchronize()
            try handle.close()
        } catch let error as UploadError {
            throw error
        } catch {
            throw UploadError(.checkpoint, "cannot write \(path): \(error.localizedDescription)")
        }
    }

    /// Creates the checkpoint's directory when it is missing: a fresh app container has no
    /// `Application Support` yet (``CheckpointLocation``).
    private func createDirectory() throws(UploadError) {
        let directory = (path as NSString).deletingLastPathComponent
        guard !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) else { return }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw UploadError(.checkpoint, "cannot create the checkpoint directory \(directory): \(Self.reason(error))")
        }
    }

    /// Deletes the checkpoint (and a leftover temporary file); missing files are fine.
    func remove() {
        try? FileManager.default.removeItem(atPath: path)
        try? FileManager.default.removeItem(atPath: temporaryPath)
    }

    /// Takes the lock; throws ``UploadError/Kind/checkpoint`` when another live upload holds it.
    /// Returns the lock's content, for ``unlock(_:)``.
    func lock() throws(UploadError) -> String {
        try createDirectory()
        let owner = "\(ProcessInfo.processInfo.processIdentifier) \(UInt64.random(in: 1...UInt64.max))"
        for _ in 0..<3 {
            do {
                try Data(owner.utf8).write(to: URL(fileURLWithPath: lockPath), options: .withoutOverwriting)
                return owner
            } catch {
                // Only an existing lock means another upload; anything else (a directory that
                // refuses new files, a read-only file system) is said as it is.
                guard FileManager.default.fileExists(atPath: lockPath) else {
                    throw UploadError(.checkpoint, "cannot create the lock \(lockPath): \(Self.reason(error))")
                }
            }
            guard isStale() else {
                throw UploadError(.checkpoint, "\(path) is in use by another upload (lock \(lockPath))")
            }
            try? FileManager.default.removeItem(atPath: lockPath)
        }
        throw UploadError(.checkpoint, "cannot take the lock \(lockPath)")
    }

    /// A short reason for a failed file operation: `permission denied` for EACCES/EPERM (whose
    /// Foundation text speaks of "saving" the file), otherwise Foundation's description.
    static func reason(_ error: any Error) -> String {
        if let error = error as? CocoaError, error.code == .fileWriteNoPermission || error.code == .fileReadNoPermission {
            return "permission denied"
        }
        if let posix = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain,
            posix.code == Int(EACCES) || posix.code == Int(EPERM)
        {
            return "permission denied"
        }
        return error.localizedDescription
    }

    /// Releases the lock if it is still `owner`'s.
    func unlock(_ owner: String) {
        if let data = FileManager.default.contents(atPath: lockPath), String(decoding: data, as: UTF8.self) == owner {
            try? FileManager.default.removeItem(atPath: lockPath)
        }
    }

    /// Whether the existing lock file belongs to no live process (see the type's comment).
    func isStale() -> Bool {
        guard let data = FileManager.default.contents(atPath: lockPath) else { return false }
        let fields = String(decoding: data, as: UTF8.self).split(separator: " ")
        guard fields.count == 2, let pid = Int32(fields[0]), pid > 0 else {
            let modified = (try? FileManager.default.attributesOfItem(atPath: lockPath)[.modificationDate]) as? Date
            return (modified.map { -$0.timeIntervalSinceNow } ?? 0) > 60
        }
        if pid == ProcessInfo.processInfo.processIdentifier { return false }
        return kill(pid, 0) != 0 && errno == ESRCH
    }
}
