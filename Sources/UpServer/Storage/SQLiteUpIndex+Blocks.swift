import NativeStore

extension SQLiteUpIndex: BlockIndex {
    static let blockColumns = "blob, block_size, received, crc32, sha1, expires_at, created_at, sniffed_type"

    /// See `BlockIndex.createBlock(_:blockSize:received:crc32:sha1:sniffedType:expiresAt:createdAt:)`.
    public func createBlock(
        _ blob: BlobID, blockSize: Int64, received: Int64, crc32: UInt32, sha1: [UInt8]?, sniffedType: String??,
        expiresAt: Int64, createdAt: Int64
    ) async throws -> BlockRecord {
        let record = try UpIndexRules.newBlock(
            blob, blockSize: blockSize, received: received, crc32: crc32, sha1: sha1, sniffedType: sniffedType,
            expiresAt: expiresAt, createdAt: createdAt)
        try await perform { database in
            try database.run(
                "INSERT INTO blocks (\(Self.blockColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    .text(blob.hex), .integer(blockSize), .integer(received), .integer(Int64(crc32)),
                    sha1.map { .blob($0) } ?? .null, .integer(expiresAt), .integer(createdAt),
                    SniffedTypeColumn.text(sniffedType).map { .text($0) } ?? .null,
                ])
        }
        return record
    }

    /// See `BlockIndex.advanceBlock(_:from:to:crc32:sha1:)`.
    public func advanceBlock(
        _ blob: BlobID, from expectedOffset: Int64, to newOffset: Int64, crc32: UInt32, sha1: [UInt8]?
    ) async throws -> Bool {
        try await perform { database in
            try database.transaction {
                guard let record = try Self.block(blob, in: database) else { return false }
                try UpIndexRules.checkAdvance(record, from: expectedOffset, to: newOffset, sha1: sha1)
                // The WHERE on `received` is the compare-and-set: a duplicate chunk finds the
                // offset already moved and changes nothing.
                try database.run(
                    "UPDATE blocks SET received = ?, crc32 = ?, sha1 = ? WHERE blob = ? AND received = ?",
                    [
                        .integer(newOffset), .integer(Int64(crc32)), sha1.map { .blob($0) } ?? .null, .text(blob.hex),
                        .integer(expectedOffset),
                    ])
                return database.changes == 1
            }
        }
    }

    /// See `BlockIndex.rewindBlock(_:from:to:crc32:)`.
    public func rewindBlock(_ blob: BlobID, from currentOffset: Int64, to offset: Int64, crc32: UInt32) async throws -> Bool {
        guard offset >= 0, offset < currentOffset else { return false }
        return try await perform { database in
            try database.run(
                "UPDATE blocks SET received = ?, crc32 = ? WHERE blob = ? AND received = ? AND sha1 IS NULL",
                [.integer(offset), .integer(Int64(crc32)), .text(blob.hex), .integer(currentOffset)])
            return database.changes == 1
        }
    }

    /// See `BlockIndex.block(_:)`.
    public func block(_ blob: BlobID) async throws -> BlockRecord? {
        try await perform { try Self.block(blob, in: $0) }
    }

    static func block(_ blob: BlobID, in database: SQLiteDatabase) throws -> BlockRecord? {
        try database.query("SELECT \(blockColumns) FROM blocks WHERE blob = ?", [.text(blob.hex)])
            .first.map(Rows.block)
    }
}
