import Foundation
import NativeCrypto

extension BlockStore {
    /// The bytes of `segments`, in order, copied 1 MiB at a time into a scratch file under
    /// `scratchDirectory` that is unlinked before this returns: the one way a store whose blobs
    /// are not single files (several disk blobs, S3 chunk objects) hands a download to the HTTP
    /// server as a file range, since HTTPKit's response body is bytes or one file range, not a
    /// stream. The price is one local copy per download; the footprint stays bounded.
    func spool(_ segments: [Segment], in scratchDirectory: URL) throws -> FileRange {
        try FileManager.default.createDirectory(at: scratchDirectory, withIntermediateDirectories: true)
        let file = scratchDirectory.appendingPathComponent("download-" + Hex.encode(SecureRandom.bytes(12)))
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw BlockStoreError.io(nil, reason: "cannot create \(file.path)")
        }
        defer { try? FileManager.default.removeItem(at: file) }
        let writer = try FileHandle(forWritingTo: file)
        defer { try? writer.close() }
        var total: Int64 = 0
        for segment in segments where segment.length > 0 {
            try forEachChunk(of: segment.blob, range: 0..<segment.length, size: 1 << 20) { piece in
                try writer.write(contentsOf: Data(piece))
            }
            total += segment.length
        }
        let reader = try FileHandle(forReadingFrom: file)
        defer { try? reader.close() }
        // The handle closes its own descriptor; the range's is a duplicate.
        let descriptor = dup(reader.fileDescriptor)
        guard descriptor >= 0 else { throw BlockStoreError.io(nil, reason: "dup failed") }
        return FileRange(descriptor: descriptor, offset: 0, length: UInt64(total))
    }
}
