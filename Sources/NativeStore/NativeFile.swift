internal import Glibc

/// A failed file system call: which call, on which path, and `errno`.
public struct NativeFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The call that failed, e.g. `"pwrite"`.
    public var operation: String
    /// The file it was made on.
    public var path: String
    /// `errno` after the call.
    public var code: Int32

    /// Whether the file (or a directory on its path) does not exist.
    public var isNotFound: Bool { code == ENOENT }

    /// Whether the file system is out of space for the caller: `ENOSPC` (the disk is full) or
    /// `EDQUOT` (the user's quota is). Nothing is wrong with the file; the call can succeed once
    /// space is freed.
    public var isNoSpace: Bool { code == ENOSPC || code == EDQUOT }

    /// A readable summary for logs.
    public var description: String { "\(operation) \(path): \(unsafe String(cString: strerror(code))) (errno \(code))" }
}

/// An open file descriptor for writing a blob without Foundation's per-call copies and seeks:
/// positioned writes straight from an array's storage (`pwrite`) and `fsync`. Safe targets cannot
/// touch pointers (DESIGN.md), so the up-server's block store keeps one of these per blob being
/// written.
///
/// The descriptor is closed when the last reference goes, so a cache may drop an instance while a
/// writer still uses it. Calls on one instance from several threads are safe at the kernel level;
/// callers keep one writer per file anyway (offsets are the caller's).
public final class NativeFile: Sendable {
    /// The path the file was opened with.
    public let path: String
    private let descriptor: Int32

    /// Opens `path` for reading and writing.
    ///
    /// - Parameter create: Create the file, which must not exist yet (`O_EXCL`): a blob id names
    ///   one file, never two writers' files.
    /// - Throws: `NativeFileError` (`isNotFound` when the file is missing).
    public init(path: String, create: Bool = false) throws(NativeFileError) {
        self.path = path
        let flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0)
        let descriptor = unsafe open(path, flags, 0o644)
        guard descriptor >= 0 else { throw NativeFileError(operation: "open", path: path, code: errno) }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// The file's size and whether it still has a name (an unlinked file has link count 0).
    ///
    /// - Throws: `NativeFileError`.
    public func status() throws(NativeFileError) -> (size: Int64, linked: Bool) {
        var info = stat()
        guard unsafe fstat(descriptor, &info) == 0 else { throw failure("fstat") }
        return (Int64(info.st_size), info.st_nlink > 0)
    }

    /// Cuts the file to `length` bytes.
    ///
    /// - Throws: `NativeFileError`.
    public func truncate(to length: Int64) throws(NativeFileError) {
        guard ftruncate(descriptor, off_t(length)) == 0 else { throw failure("ftruncate") }
    }

    /// Writes all of `bytes` at `offset` straight from the array's storage (no copy), looping over
    /// short writes and `EINTR`.
    ///
    /// - Throws: `NativeFileError`.
    public func write(_ bytes: [UInt8], at offset: Int64) throws(NativeFileError) {
        let result: Int32? = unsafe bytes.withUnsafeBytes { buffer -> Int32? in
            var done = 0
            while done < buffer.count {
                let wrote = unsafe pwrite(
                    descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
                if wrote < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                done += wrote
            }
            return nil
        }
        if let code = result { throw NativeFileError(operation: "pwrite", path: path, code: code) }
    }

    /// Makes the file's data and metadata durable (`fsync`).
    ///
    /// - Throws: `NativeFileError`.
    public func sync() throws(NativeFileError) {
        while fsync(descriptor) != 0 {
            guard errno == EINTR else { throw failure("fsync") }
        }
    }

    /// Makes a directory's entries durable (`fsync` of the directory): a file whose data is
    /// durable but whose name is not can vanish in a power cut.
    ///
    /// - Throws: `NativeFileError`.
    public static func syncDirectory(_ path: String) throws(NativeFileError) {
        let descriptor = unsafe open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw NativeFileError(operation: "open", path: path, code: errno) }
        defer { close(descriptor) }
        while fsync(descriptor) != 0 {
            guard errno == EINTR else { throw NativeFileError(operation: "fsync", path: path, code: errno) }
        }
    }

    private func failure(_ operation: String) -> NativeFileError {
        NativeFileError(operation: operation, path: path, code: errno)
    }
}
