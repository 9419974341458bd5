import ObjectStorage

extension S3BlockStore {
    /// Makes `blob` in this store hold the first `length` bytes of the blob of the same id in
    /// `source`: how `up-server migrate` moves blobs off a disk (``MigrateCommand``). The one
    /// place a blob gets an id this store did not choose (``create()`` picks a random one), so
    /// the index rows copied after it name the same `BlobID`.
    ///
    /// Resumable and idempotent: a blob already `length` long here is left alone (ids are random,
    /// so a blob of that id is these bytes); a shorter one (a copy cut short) is continued from
    /// its end; a longer one is cut back to `length`. Reads and writes at most `pieceSize`
    /// bytes at a time, each piece one chunk object (``append(_:to:at:)``).
    ///
    /// - Returns: `false` if the blob was already here, whole; `true` if bytes were written.
    /// - Throws: `source`'s `BlockStoreError` (e.g. `.outOfRange` when it holds fewer than
    ///   `length` bytes: acknowledged bytes are missing there), or the `S3Error`.
    public func importBlob(_ blob: BlobID, length: Int64, from source: any BlockStore, pieceSize: Int = 4 << 20) throws
        -> Bool
    {
        let existing = try chunks(of: blob)
        var offset: Int64 = 0
        if existing.isEmpty {
            let client = self.client
            _ = try BlockingAsync.run { try await client.putObject(Self.chunkKey(blob, at: 0), body: .bytes([])) }
        } else {
            let have = S3BlobChunk.chainLength(existing)
            if have == length { return false }
            offset = min(have, length)
        }
        if offset == length { _ = try append([], to: blob, at: length) }  // longer: cut back
        while offset < length {
            let piece = try source.read(blob, range: offset..<min(length, offset + Int64(pieceSize)))
            offset = try append(piece, to: blob, at: offset)
        }
        return true
    }
}
