import UpCore

/// What one sweep pass removed: the answer of `POST /admin/sweep`.
public struct SweepReport: Sendable, Equatable {
    /// Expired v1 block rows.
    public var blocks: Int
    /// Expired or finished v2 upload rows.
    public var uploads: Int
    /// Objects past `deleteAfterDays`.
    public var objects: Int
    /// Orphan blobs (no row names them, older than `orphanGraceSeconds`).
    public var orphans: Int

    /// Creates a report.
    public init(blocks: Int = 0, uploads: Int = 0, objects: Int = 0, orphans: Int = 0) {
        self.blocks = blocks
        self.uploads = uploads
        self.objects = objects
        self.orphans = orphans
    }

    /// `{"blocks":n,"uploads":n,"objects":n,"orphans":n}`.
    var json: JSONValue {
        .object([
            ("blocks", .int(Int64(blocks))), ("uploads", .int(Int64(uploads))),
            ("objects", .int(Int64(objects))), ("orphans", .int(Int64(orphans))),
        ])
    }
}
