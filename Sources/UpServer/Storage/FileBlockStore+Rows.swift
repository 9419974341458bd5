import Foundation
import NativeOS
import Synchronization

/// The small blobs of `FileBlockStore` that are rows (`InlineBlobs`): writing a row, reading
/// one, and moving one into a file when a write takes it past ``FileBlockStore/smallBlobLimit``.
extension FileBlockStore {
    /// ``append(_:to:at:)`` for a blob that is a row or not yet written, when the result fits a
    /// row: the row written with the same rules (an unacknowledged tail cut, missing bytes an
    /// error) and committed. Nil when the blob is, or is to become, a file.
    func appendToRow(_ bytes: [UInt8], to blob: BlobID, at offset: Int64) throws -> Int64? {
        guard let limit = smallBlobLimit, offset + Int64(bytes.count) <= Int64(limit),
            writers.withLock({ $0[blob] == nil })
        else { return nil }
        let end = offset + Int64(bytes.count)
        if let named = unwritten.withLock({ $0.removeValue(forKey: blob) }) {
            guard offset == 0 else {
                unwritten.withLock { $0[blob] = named }
                throw BlockStoreError.missingBytes(blob, expected: offset, actual: 0)
            }
            do {
                try io(blob) { try inline.insert(blob, bytes, at: Date().timeIntervalSince1970) }
            } catch {
                unwritten.withLock { $0[blob] = named }
                throw error
            }
            return end
        }
        guard let stored = try row(blob) else { return nil }
        if Int64(stored.count) < offset {
            throw BlockStoreError.missingBytes(blob, expected: offset, actual: Int64(stored.count))
        }
        let written = Array(stored.prefix(Int(offset))) + bytes
        guard try io(blob, { try inline.replace(blob, written, at: Date().timeIntervalSince1970) }) else {
            throw BlockStoreError.notFound(blob)  // removed since it was read (another instance)
        }
        return end
    }

    /// The bytes of a blob that is not a file (a row, or a name not yet written); nil when it is
    /// a file, or unknown (the caller's open says so).
    func bytesWithoutFile(of blob: BlobID) throws -> [UInt8]? {
        if writers.withLock({ $0[blob] != nil }) { return nil }
        if unwritten.withLock({ $0[blob] != nil }) { return [] }
        return try row(blob)
    }

    /// The length of a blob that is not a file (a row, or a name not yet written: 0); nil when
    /// it is a file, or unknown. ``bytesWithoutFile(of:)``'s answer without reading a row's bytes.
    func lengthWithoutFile(of blob: BlobID) throws -> Int64? {
        if writers.withLock({ $0[blob] != nil }) { return nil }
        if unwritten.withLock({ $0[blob] != nil }) { return 0 }
        return try io(blob) { try inline.length(of: blob) }
    }

    /// The row's bytes, if `blob` is a row.
    func row(_ blob: BlobID) throws -> [UInt8]? {
        try io(blob) { try inline.bytes(of: blob) }
    }

    /// Moves a row blob into a file of the same name before an append that takes it past
    /// ``smallBlobLimit``: the file is written and fsynced (the row's bytes were durable and stay
    /// so), then the row is deleted. A file left by a move cut short is written over.
    func moveIntoFile(_ blob: BlobID, _ bytes: [UInt8]) throws -> NativeFile {
        let path = url(of: blob).path
        let writer: NativeFile
        if FileManager.default.fileExists(atPath: path) {
            writer = try io(blob) { try NativeFile(path: path, directWrites: true) }
            try io(blob) { try writer.truncate(to: 0) }
        } else {
            writer = try makeFile(blob)
        }
        try io(blob) {
            if !bytes.isEmpty { try writer.write(bytes, at: 0) }
            try writer.sync()
            try inline.remove(blob)
        }
        remember(writer, for: blob)
        return writer
    }
}
