import Foundation
import NativeCrypto

/// What identifies the content of a local file for a checkpoint: size, modification time,
/// inode and a cheap content fingerprint.
///
/// The fingerprint is SHA-1 over the size, the first MiB and the last MiB, not over the whole
/// file: hashing the whole file would read all of it before a resume could send a byte (minutes
/// for a large file on a slow disk), which defeats the point of resuming. Size, mtime and inode
/// catch ordinary edits and replacements (``FileWatch`` checks them during the upload and before
/// its final request); the head/tail hash catches an edit between runs that restored the mtime;
/// and on resume the bytes of a half-sent block are checked against the CRC-32 recorded when
/// they were sent.
struct FileFacts: Sendable, Equatable, Codable {
    /// Bytes covered at each end by ``fingerprint``.
    static let fingerprintSpan = 1 << 20

    /// Size in bytes.
    var size: Int64
    /// Modification time, seconds since 1970 (sub-second precision where the file system has it).
    var modificationTime: Double
    /// The inode (file serial number); 0 where unknown.
    var inode: UInt64
    /// Hex SHA-1 of the decimal size, the first MiB and the last MiB (empty from ``stat(path:)``).
    var fingerprint: String

    /// Reads the facts of the file at `path`, opened as `file` (two 1 MiB reads at most).
    static func read(path: String, file: SourceFile) throws(UploadError) -> FileFacts {
        var facts = try stat(path: path)
        var digest = Digest(.sha1)
        digest.update(Array(String(facts.size).utf8))
        let span = Int64(fingerprintSpan)
        for (offset, length) in [(0, min(facts.size, span)), (max(span, facts.size - span), facts.size - max(span, facts.size - span))]
        where length > 0 {
            let bytes = try file.read(offset: offset, length: Int(length))
            digest.update(bytes)
            file.recycle(bytes)
        }
        facts.fingerprint = Hex.encode(digest.finalize())
        return facts
    }

    /// Size, mtime and inode of the file at `path` (one `stat`), without the fingerprint.
    static func stat(path: String) throws(UploadError) -> FileFacts {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw UploadError(.file, "cannot read \(path): \(error.localizedDescription)")
        }
        guard (attributes[.type] as? FileAttributeType) == .typeRegular else {
            throw UploadError(.file, "\(path) is not a regular file")
        }
        return FileFacts(
            size: (attributes[.size] as? NSNumber)?.int64Value ?? 0,
            modificationTime: (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0,
            inode: (attributes[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0,
            fingerprint: "")
    }

    /// How `now` differs from these facts in size, modification time or inode; nil when it does not.
    func identityChange(to now: FileFacts) -> String? {
        if now.size != size { return "its size changed from \(size) to \(now.size) bytes" }
        if now.modificationTime != modificationTime { return "its modification time changed" }
        if now.inode != inode { return "it was replaced (inode \(inode) → \(now.inode))" }
        return nil
    }
}
