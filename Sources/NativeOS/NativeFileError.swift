#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

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
    public var description: String { "\(operation) \(path): \(SystemError.message(code)) (errno \(code))" }

    /// The reason alone, e.g. `no such file or directory`: for one-line messages that name the
    /// path and the operation in their own words.
    public var reason: String { SystemError.message(code) }
}
