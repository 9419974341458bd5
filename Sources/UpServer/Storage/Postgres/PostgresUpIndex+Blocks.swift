import NativePostgres

extension PostgresUpIndex: BlockIndex {
    /// See `BlockIndex.createBlock(_:blockSize:received:crc32:sha1:sniffedType:expiresAt:createdAt:)`.
    public func createBlock(
        _ blob: BlobID, blockSize: Int64, received: Int64, crc32: UInt32, sha1: [UInt8]?, sniffedType: String??,
        expiresAt: Int64, createdAt: Int64
    ) async throws -> BlockRecord {
        let record = try UpIndexRules.newBlock(
            blob, blockSize: blockSize, received: received, crc32: crc32, sha1: sha1, sniffedType: sniffedType,
            expiresAt: expiresAt, createdAt: createdAt)
        _ = try await connection { connection in
            try connection.query(
                "INSERT INTO blocks (\(SQLiteUpIndex.blockColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                [
                    .text(blob.hex), .integer(blockSize), .integer(received), .integer(Int64(crc32)), PostgresValue(sha1),
                    .integer(expiresAt), .integer(createdAt), PostgresValue(SniffedTypeColumn.text(sniffedType)),
                ])
        }
        return record
    }

    /// See `BlockIndex.advanceBlock(_:from:to:crc32:sha1:)`.
    ///
    /// One statement, no transaction: the WHERE on `received` is the compare-and-set (a
    /// duplicate or concurrent chunk, on any instance, finds the offset already moved and
    /// changes nothing), and the rest of the WHERE is `UpIndexRules.checkAdvance` in SQL, so an
    /// update the rules refuse is never applied. Only when nothing changed is the row read, to
    /// tell a refused argument (thrown by `UpIndexRules.checkAdvance`, as everywhere) from a
    /// block that moved on or is gone (`false`); `block_size` never changes, so that read decides
    /// as the update did. Each v1 chunk ends here: one round trip instead of three (`BEGIN` +
    /// read, update, `COMMIT`).
    public func advanceBlock(
        _ blob: BlobID, from expectedOffset: Int64, to newOffset: Int64, crc32: UInt32, sha1: [UInt8]?
    ) async throws -> Bool {
        try await connection { connection in
            let advanced = try connection.query(
                """
                UPDATE blocks SET received = $1, crc32 = $2, sha1 = $3
                WHERE blob = $4 AND received = $5 AND $5 >= 0 AND $1 >= $5 AND $1 <= block_size
                  AND ($3::bytea IS NOT NULL) = ($1 = block_size) AND coalesce(length($3::bytea), 20) = 20
                """,
                [
                    .integer(newOffset), .integer(Int64(crc32)), PostgresValue(sha1), .text(blob.hex),
                    .integer(expectedOffset),
                ]
            ).rowsAffected == 1
            if advanced { return true }
            guard let record = try Self.block(blob, on: connection) else { return false }
            try UpIndexRules.checkAdvance(record, from: expectedOffset, to: newOffset, sha1: sha1)
            return false
        }
    }

    /// See `BlockIndex.rewindBlock(_:from:to:crc32:)`.
    public func rewindBlock(_ blob: BlobID, from currentOffset: Int64, to offset: Int64, crc32: UInt32) async throws -> Bool {
        guard offset >= 0, offset < currentOffset else { return false }
        return try await connection { connection in
            try connection.query(
                "UPDATE blocks SET received = $1, crc32 = $2 WHERE blob = $3 AND received = $4 AND sha1 IS NULL",
                [.integer(offset), .integer(Int64(crc32)), .text(blob.hex), .integer(currentOffset)]
            ).rowsAffected == 1
        }
    }

    /// See `BlockIndex.block(_:)`.
    public func block(_ blob: BlobID) async throws -> BlockRecord? {
        try await connection { try Self.block(blob, on: $0) }
    }

    static func block(_ blob: BlobID, on connection: PostgresConnection) throws -> BlockRecord? {
        try connection.query("SELECT \(SQLiteUpIndex.blockColumns) FROM blocks WHERE blob = $1", [.text(blob.hex)])
            .first.map(Rows.block)
    }
}
