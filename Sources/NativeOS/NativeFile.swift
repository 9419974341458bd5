#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif
import Synchronization

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
    private let direct: Mutex<DirectWrites>

    /// Whether large writes bypass the page cache, and the channel once opened.
    private enum DirectWrites {
        case off
        case unopened
        #if os(Linux)
        case open(DirectWriteChannel)
        #endif
    }

    /// Opens `path` for reading and writing.
    ///
    /// - Parameters:
    ///   - create: Create the file, which must not exist yet (`O_EXCL`): a blob id names one
    ///     file, never two writers' files.
    ///   - directWrites: Write the block-aligned middle of large writes with `O_DIRECT`, past the
    ///     page cache (Linux; see `DirectWriteChannel` for why and for the fallback when the file
    ///     system refuses). What reads and `fsync` see is the same either way.
    /// - Throws: `NativeFileError` (`isNotFound` when the file is missing).
    public init(path: String, create: Bool = false, directWrites: Bool = false) throws(NativeFileError) {
        self.path = path
        let flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0)
        let descriptor = unsafe open(path, flags, 0o644)
        guard descriptor >= 0 else { throw NativeFileError(operation: "open", path: path, code: errno) }
        self.descriptor = descriptor
        direct = Mutex(directWrites ? .unopened : .off)
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
    /// short writes and `EINTR`. With `directWrites`, the block-aligned middle of a large write
    /// goes past the page cache instead (one copy into an aligned buffer).
    ///
    /// - Throws: `NativeFileError`.
    public func write(_ bytes: [UInt8], at offset: Int64) throws(NativeFileError) {
        let result: Int32? = unsafe bytes.withUnsafeBytes { buffer -> Int32? in
            var done = 0
            #if os(Linux)
            switch unsafe writeDirect(buffer, at: offset) {
            case .success(let count): done = count
            case .failure(let error): return error.code
            }
            #endif
            return unsafe Self.writeAll(descriptor, buffer, from: done, at: offset)
        }
        if let code = result { throw NativeFileError(operation: "pwrite", path: path, code: code) }
    }

    /// `pwrite` of `buffer[start...]` at `offset + start`, over short writes and `EINTR`; `errno`
    /// on failure.
    private static func writeAll(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, from start: Int, at offset: Int64) -> Int32? {
        var done = start
        while done < buffer.count {
            let wrote = unsafe pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if wrote < 0 {
                if errno == EINTR { continue }
                return errno
            }
            done += wrote
        }
        return nil
    }

    #if os(Linux)
    /// Writes as much of `buffer` as suits `O_DIRECT`: the unaligned head through the page cache,
    /// then the aligned middle directly. Returns how many leading bytes are written (0 when the
    /// write is too small or direct writes are off), or `errno`.
    private func writeDirect(_ buffer: UnsafeRawBufferPointer, at offset: Int64) -> Result<Int, NativeFileError> {
        let alignment = Int64(DirectWriteChannel.alignment)
        let start = (offset + alignment - 1) / alignment * alignment
        let end = (offset + Int64(buffer.count)) / alignment * alignment
        guard end - start >= Int64(DirectWriteChannel.minimumBytes) else { return .success(0) }
        return direct.withLock { state -> Result<Int, NativeFileError> in
            let channel: DirectWriteChannel
            switch state {
            case .off: return .success(0)
            case .open(let open): channel = open
            case .unopened:
                guard let opened = DirectWriteChannel(path: path) else {
                    state = .off
                    return .success(0)
                }
                state = .open(opened)
                channel = opened
            }
            let head = Int(start - offset)
            if let code = unsafe Self.writeAll(descriptor, UnsafeRawBufferPointer(rebasing: buffer[..<head]), from: 0, at: offset) {
                return .failure(NativeFileError(operation: "pwrite", path: path, code: code))
            }
            let middle = unsafe UnsafeRawBufferPointer(rebasing: buffer[head..<(head + Int(end - start))])
            switch unsafe channel.write(middle, at: start) {
            case .written: return .success(head + middle.count)
            case .refused(let count):
                state = .off
                return .success(head + count)
            case .failed(let code): return .failure(NativeFileError(operation: "pwrite", path: path, code: code))
            }
        }
    }
    #endif

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

    /// The whole content of the file at `path` (a configuration file, a secret): read with
    /// `open`/`read`, so a failure is an errno naming the path, never a Foundation error dump.
    ///
    /// - Throws: `NativeFileError` (`isNotFound` when the file is missing).
    public static func contents(atPath path: String) throws(NativeFileError) -> [UInt8] {
        let descriptor = unsafe open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw NativeFileError(operation: "open", path: path, code: errno) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = unsafe buffer.withUnsafeMutableBytes { unsafe read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw NativeFileError(operation: "read", path: path, code: errno)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: buffer[..<count])
        }
    }

    /// Creates the directory `path` and any missing parents (`mkdir -p`, mode 0755).
    ///
    /// - Throws: `NativeFileError` naming the first directory that could not be made.
    public static func createDirectories(atPath path: String) throws(NativeFileError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            if unsafe mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw NativeFileError(operation: "mkdir", path: prefix, code: errno)
            }
            prefix += "/"
        }
        var info = stat()
        guard unsafe stat(path, &info) == 0 else { throw NativeFileError(operation: "stat", path: path, code: errno) }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw NativeFileError(operation: "mkdir", path: path, code: ENOTDIR) }
    }

    private func failure(_ operation: String) -> NativeFileError {
        NativeFileError(operation: operation, path: path, code: errno)
    }
}
