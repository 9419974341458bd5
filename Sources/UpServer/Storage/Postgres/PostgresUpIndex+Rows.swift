import NativePostgres

extension PostgresUpIndex {
    /// Row ↔ value conversions, in the column order of the SELECTs that use them (the columns
    /// are `SQLiteUpIndex`'s).
    enum Rows {
        static func blobID(_ text: String) throws -> BlobID {
            guard let blob = BlobID(hex: text) else { throw PostgresError(.typeMismatch, message: "not a blob id: \(text)") }
            return blob
        }

        /// `SQLiteUpIndex.blockColumns` order.
        static func block(_ row: PostgresRow) throws -> BlockRecord {
            BlockRecord(
                blob: try blobID(row.decode(0)), blockSize: try row.decode(1), offset: try row.decode(2),
                crc32: UInt32(truncatingIfNeeded: try row.decode(3, as: Int64.self)), sha1: try row.decode(4),
                expiresAt: try row.decode(5), createdAt: try row.decode(6),
                sniffedType: SniffedTypeColumn.value(try row.decode(7, as: String?.self)))
        }

        /// `SQLiteUpIndex.uploadColumns` order.
        static func upload(_ row: PostgresRow) throws -> MultipartUpload {
            guard let state = MultipartUpload.State(rawValue: try row.decode(3)) else {
                throw PostgresError(.typeMismatch, message: "unknown upload state")
            }
            return MultipartUpload(
                id: try row.decode(0), bucket: try row.decode(1), key: try row.decode(2), expiresAt: try row.decode(4),
                createdAt: try row.decode(5), state: state)
        }

        /// `SQLiteUpIndex.partColumns` order.
        static func part(_ row: PostgresRow) throws -> UploadPart {
            UploadPart(
                uploadID: try row.decode(0), partNumber: try row.decode(1), blob: try blobID(row.decode(2)),
                size: try row.decode(3), md5: try row.decode(4), etag: try row.decode(5), digest: try row.decode(6),
                putTime: try row.decode(7), sniffedType: SniffedTypeColumn.value(try row.decode(8, as: String?.self)))
        }

        /// `SQLiteUpIndex.completionColumns` order.
        static func completion(_ row: PostgresRow) throws -> Completion {
            Completion(
                key: CompletionKey(bucket: try row.decode(0), requestSHA1: try row.decode(1)), objectKey: try row.decode(2),
                etag: try row.decode(3), result: try row.decode(4), expiresAt: try row.decode(5),
                outboxID: try row.decode(6))
        }

        /// `SQLiteUpIndex.objectColumns` order, with the segments read separately.
        static func object(_ row: PostgresRow, segments: [Segment]) throws -> StoredObject {
            StoredObject(
                bucket: try row.decode(0), key: try row.decode(1), etag: try row.decode(2), fsize: try row.decode(3),
                mimeType: try row.decode(4), segments: segments,
                metadata: try SQLiteUpIndex.Rows.metadata(row.decode(5)), putTime: try row.decode(6),
                deleteAfterDays: try row.decode(7), fileType: try row.decode(8), version: try row.decode(9))
        }
    }
}
