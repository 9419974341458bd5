import Foundation
import NativeCrypto

/// What identifies the content of a local file for a checkpoint: size, modification time,
/// inode and a cheap content fingerprint.
///
/// The fingerprint is SHA-1 over the size, the first MiB and the last MiB, not over the whole
/// file: hashing the whole file would read all of it before a resume could send a byte (minutes
/// for a large file on a slow disk), which defeats the point of resuming. Size, mtime and inode
/// catch ordinary edits and replacements; the head/tail hash catches an edit that restored the
/// mtime; and an edit anywhere else is caught at the end, because the final hash must equal the
/// etag computed from the file while uploading (``UploadError/Kind/integrity``).
struct FileFacts: Sendable, Equatable, Codable {
    /// Bytes covered at each end by ``fingerprint``.
    static let fingerprintSpan = 1 << 20

    /// Size in bytes.
    var size: Int64
    /// Modification time, seconds since 1970 (sub-second precision where the file system has it).
    var modificationTime: Double
    /// The inode (file serial number); 0 where unknown.
    var inode: UInt64
    /// Hex SHA-1 of the decimal size, the first MiB and the last MiB.
    var fingerprint: String

    /// Reads the facts of the file at `path` (two 1 MiB reads at most).
    static func read(path: String) throws(UploadError) -> FileFacts {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw UploadError(.file, "cannot read \(path): \(error.localizedDescription)")
        }
        guard (attributes[.type] as? FileAttributeType) == .typeRegular else {
            throw UploadError(.file, "\(path) is not a regular file")
        }
        let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
        let mtime = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        let inode = (attributes[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0
        var digest = Digest(.sha1)
        digest.update(Array(String(size).utf8))
        let span = Int64(fingerprintSpan)
        digest.update(try FileRegion.read(path: path, offset: 0, length: min(size, span)))
        if size > span {
            let tailStart = max(span, size - span)
            digest.update(try FileRegion.read(path: path, offset: tailStart, length: size - tailStart))
        }
        return FileFacts(size: size, modificationTime: mtime, inode: inode, fingerprint: Hex.encode(digest.finalize()))
    }
}
