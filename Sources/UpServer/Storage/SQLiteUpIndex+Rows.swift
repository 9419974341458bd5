import NativeStore
import UpCore

extension SQLiteUpIndex {
    /// Row ↔ value conversions, in the column order of the SELECTs that use them.
    enum Rows {
        static func blobID(_ text: String) throws -> BlobID {
            guard let blob = BlobID(hex: text) else {
                throw SQLiteError(code: SQLiteError.mismatch, message: "not a blob id: \(text)")
            }
            return blob
        }

        static func optionalText(_ value: SQLiteValue) -> String? { value.textValue }

        /// `blockColumns` order.
        static func block(_ row: SQLiteRow) throws -> BlockRecord {
            BlockRecord(
                blob: try blobID(row.text(0)), blockSize: try row.integer(1), offset: try row.integer(2),
                crc32: UInt32(truncatingIfNeeded: try row.integer(3)), sha1: row[4].blobValue,
                expiresAt: try row.integer(5), createdAt: try row.integer(6),
                sniffedType: SniffedTypeColumn.value(row[7].textValue))
        }

        /// `uploadColumns` order.
        static func upload(_ row: SQLiteRow) throws -> MultipartUpload {
            guard let state = MultipartUpload.State(rawValue: try row.text(3)) else {
                throw SQLiteError(code: SQLiteError.mismatch, message: "unknown upload state")
            }
            return MultipartUpload(
                id: try row.text(0), bucket: try row.text(1), key: row[2].textValue, expiresAt: try row.integer(4),
                createdAt: try row.integer(5), state: state)
        }

        /// `partColumns` order.
        static func part(_ row: SQLiteRow) throws -> UploadPart {
            UploadPart(
                uploadID: try row.text(0), partNumber: Int(try row.integer(1)), blob: try blobID(row.text(2)),
                size: try row.integer(3), md5: try row.text(4), etag: try row.text(5), digest: try row.blob(6),
                putTime: try row.integer(7), sniffedType: SniffedTypeColumn.value(row[8].textValue))
        }

        /// `completionColumns` order.
        static func completion(_ row: SQLiteRow) throws -> Completion {
            Completion(
                key: CompletionKey(bucket: try row.text(0), requestSHA1: try row.blob(1)), objectKey: try row.text(2),
                etag: try row.text(3), result: row[4].textValue, expiresAt: try row.integer(5),
                outboxID: row[6].integerValue)
        }

        /// An object's `x-qn-meta-*` metadata as its column holds it: a JSON object of strings,
        /// names in order (stable text for diffs), the text `JSONEncoder` with sorted keys wrote
        /// before; written without Foundation's encoder, which cost ~0.6 % of up-server's CPU per
        /// small upload.
        static func metadataText(_ metadata: [String: String]) -> String {
            JSONValue.object(metadata.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) }).serialized()
        }

        /// The metadata in a column written by ``metadataText(_:)`` (or by `JSONEncoder`, earlier).
        ///
        /// - Throws: `SQLiteError` (mismatch) for text that is not a JSON object of strings.
        static func metadata(_ text: String) throws -> [String: String] {
            guard case .object(let members)? = try? JSONValue.parse(text) else {
                throw SQLiteError(code: SQLiteError.mismatch, message: "object metadata is not a JSON object: \(text)")
            }
            var metadata: [String: String] = [:]
            for member in members {
                guard case .string(let value) = member.value else {
                    throw SQLiteError(code: SQLiteError.mismatch, message: "object metadata \(member.key) is not a string")
                }
                metadata[member.key] = value
            }
            return metadata
        }
    }
}
