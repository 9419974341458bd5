#if os(Linux)
internal import Glibc
import Synchronization

/// The `O_DIRECT` side of a ``NativeFile``: the block-aligned middle of a large write goes from
/// an aligned buffer straight to the device, instead of being copied into the page cache.
///
/// Why: on this project's machines a buffered write costs the kernel far more than the bytes'
/// hashing (1 GiB of 4 MiB writes + fsync: 3.7 s of system time buffered, 0.13–0.38 s with
/// `O_DIRECT`, `dd` on ext4, 2026-12-05), because every page of a new file is a freshly
/// allocated, zeroed and copied page-cache page. An up server writes each byte once and rarely
/// reads it back soon, so the cache buys nothing; object stores such as MinIO write with
/// `O_DIRECT` for the same reason.
///
/// Rules `O_DIRECT` imposes, and how they are met: the memory address, the file offset and the
/// length must be multiples of the device's block size. The caller passes only whole aligned
/// blocks at aligned offsets (``NativeFile/write(_:at:)`` writes the unaligned head and tail
/// through the page cache); the bytes are copied into a page-aligned buffer borrowed for the
/// write (one copy, which is cheaper than the page cache's own). 4096 covers 512-byte and 4 KiB sector devices.
///
/// A file system that refuses `O_DIRECT` (tmpfs on older kernels, some network file systems)
/// fails the `open` or the first write with `EINVAL`; the file then falls back to ordinary
/// writes for good. Durability is unchanged: data written this way still needs the caller's
/// `fsync` (for the device's cache and the file's size), as before.
///
/// `@unchecked Sendable`: ``NativeFile`` keeps it in its mutex and uses it only under that lock.
@safe final class DirectWriteChannel: @unchecked Sendable {
    /// Alignment of addresses, offsets and lengths.
    static let alignment = 4096
    /// Bytes copied and written per system call (the up server's writer flushes 256 KiB).
    static let bufferSize = 256 << 10
    /// Aligned bytes below which a write stays buffered: each direct write waits for the device,
    /// which small writes pay for more than they save.
    static let minimumBytes = 64 << 10

    private let descriptor: Int32

    /// Opens `path` for direct writes, or `nil` when the file system refuses.
    init?(path: String) {
        let descriptor = unsafe open(path, O_WRONLY | O_CLOEXEC | Self.directFlag)
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// What a direct write did.
    enum Outcome {
        /// Every byte was written.
        case written
        /// The first `count` bytes were written; the kernel refused the rest as not suitable for
        /// `O_DIRECT` (`EINVAL`), so the caller writes them through the page cache and stops
        /// using this channel.
        case refused(after: Int)
        /// A real error (`errno`): the disk is full, an I/O error.
        case failed(Int32)
    }

    /// Writes `bytes` at `offset`; both `offset` and `bytes.count` are multiples of ``alignment``.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Outcome {
        guard let buffer = unsafe AlignedBuffers.shared.take() else { return .refused(after: 0) }
        defer { unsafe AlignedBuffers.shared.give(back: buffer) }
        var done = 0
        while done < bytes.count {
            let length = min(Self.bufferSize, bytes.count - done)
            unsafe buffer.copyMemory(from: bytes.baseAddress! + done, byteCount: length)
            var sent = 0
            while sent < length {
                let wrote = unsafe pwrite(descriptor, buffer + sent, length - sent, off_t(offset) + off_t(done + sent))
                if wrote < 0 {
                    if errno == EINTR { continue }
                    return errno == EINVAL ? .refused(after: done + sent) : .failed(errno)
                }
                // A short direct write leaves the rest unaligned only in theory (the kernel
                // writes whole blocks); if it happens, hand the rest back to the page cache.
                if wrote % Self.alignment != 0 || wrote == 0 { return .refused(after: done + sent + wrote) }
                sent += wrote
            }
            done += length
        }
        return .written
    }

    /// `O_DIRECT`, which Glibc's Swift overlay does not export (it is a `_GNU_SOURCE` name).
    private static var directFlag: Int32 {
        #if arch(arm64) || arch(arm)
        0o200000
        #else
        0o40000
        #endif
    }
}

/// Page-aligned buffers of ``DirectWriteChannel/bufferSize`` bytes, lent for one write at a time.
///
/// Shared by every file, so memory follows the writes in flight (one per blocking thread writing
/// at that moment), not the files open: up-server keeps up to 128 blobs open for writing, and a
/// buffer each would hold 32 MiB. At most ``keptIdle`` buffers wait between writes.
@safe final class AlignedBuffers: @unchecked Sendable {
    static let shared = AlignedBuffers()
    static let keptIdle = 8

    /// Idle buffers' addresses (an address is `Sendable`, a pointer is not).
    private let idle = Mutex<[UInt]>([])

    /// A buffer, reused or newly allocated; nil if memory cannot be had.
    func take() -> UnsafeMutableRawPointer? {
        if let reused = idle.withLock({ $0.popLast() }) { return unsafe UnsafeMutableRawPointer(bitPattern: reused) }
        var memory: UnsafeMutableRawPointer?
        guard unsafe posix_memalign(&memory, DirectWriteChannel.alignment, DirectWriteChannel.bufferSize) == 0 else {
            return nil
        }
        return unsafe memory
    }

    /// Returns a buffer from ``take()``; freed if enough wait already.
    func give(back buffer: UnsafeMutableRawPointer) {
        let address = UInt(bitPattern: buffer)
        let kept = idle.withLock { idle in
            guard idle.count < Self.keptIdle else { return false }
            idle.append(address)
            return true
        }
        if !kept { unsafe free(buffer) }
    }
}
#endif
