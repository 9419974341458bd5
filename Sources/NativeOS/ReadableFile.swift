#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A file opened once for reads at given offsets (`pread`), closed when the last reference goes.
///
/// Why not `FileHandle`: its reads return a fresh `Data` that must then be copied into the
/// `[UInt8]` a request is sent from — for an upload that is a second copy of every byte, and two
/// fresh 4 MiB allocations (page faults, zeroing) per chunk. ``read(into:count:at:)`` fills a
/// caller's array in place, so the uploader can reuse a few buffers for the whole file.
public final class ReadableFile: Sendable {
    /// The path it was opened with.
    public let path: String
    private let descriptor: Int32

    /// Opens `path` read-only.
    public init(path: String) throws(NativeFileError) {
        let descriptor = unsafe open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw NativeFileError(operation: "open", path: path, code: errno) }
        self.path = path
        self.descriptor = descriptor
    }

    deinit { _ = close(descriptor) }

    /// Reads up to `count` bytes from `offset` into `buffer`, which is resized to the bytes read:
    /// `count`, fewer only where the file ends. The array's storage is reused when it is not
    /// shared (its contents are overwritten, not zeroed first).
    @discardableResult
    public func read(into buffer: inout [UInt8], count: Int, at offset: Int64) throws(NativeFileError) -> Int {
        precondition(count >= 0 && offset >= 0, "negative count or offset")
        if buffer.count > count {
            buffer.removeLast(buffer.count - count)
        } else if buffer.count < count {
            buffer.append(contentsOf: repeatElement(0, count: count - buffer.count))
        }
        let descriptor = self.descriptor
        let outcome: (done: Int, errno: Int32) = unsafe buffer.withUnsafeMutableBytes { bytes in
            var done = 0
            while done < count {
                let n = unsafe pread(descriptor, bytes.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n > 0 {
                    done += n
                } else if n == 0 {
                    break
                } else if errno != EINTR {
                    return (done, errno)
                }
            }
            return (done, 0)
        }
        guard outcome.errno == 0 else { throw NativeFileError(operation: "pread", path: path, code: outcome.errno) }
        if outcome.done < count { buffer.removeLast(count - outcome.done) }
        return outcome.done
    }
}
