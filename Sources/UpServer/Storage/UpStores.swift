public import Outbox

/// Every store up-server runs on, by role — handed out one role at a time: each controller gets
/// only the roles it uses (`UpServer.init`).
///
/// The index roles usually come from one implementation (`SQLiteUpIndex`, or the in-memory twin
/// in tests) because some steps span roles in one transaction; blobs have a store of their own
/// (local disk now; S3 later).
public struct UpStores: Sendable {
    /// The bytes of blocks and parts.
    public var blobs: any BlockStore
    /// The v1 blocks' state.
    public var blocks: any BlockIndex
    /// v2 uploads and their parts.
    public var uploads: any MultipartIndex
    /// Objects and completion records.
    public var objects: any ObjectIndex
    /// Listing, copying and changing objects (the management API).
    public var catalog: any ObjectCatalog
    /// What garbage collection needs.
    public var sweep: any SweepIndex
    /// The callback outbox (in the objects' database: an entry is written with its object).
    public var outbox: any OutboxStore
    /// Run once before the server listens: migrates a PostgreSQL index, checks an S3 bucket.
    /// Default: nothing (SQLite migrates when opened; a disk needs no check).
    public var prepare: @Sendable () async throws -> Void = {}

    /// Stores from separate implementations per role.
    public init(
        blobs: any BlockStore, blocks: any BlockIndex, uploads: any MultipartIndex, objects: any ObjectIndex,
        catalog: any ObjectCatalog, sweep: any SweepIndex, outbox: any OutboxStore
    ) {
        self.blobs = blobs
        self.blocks = blocks
        self.uploads = uploads
        self.objects = objects
        self.catalog = catalog
        self.sweep = sweep
        self.outbox = outbox
    }

    /// Every index role from `index`, with its `outbox` and the `blobs`.
    public init(
        blobs: any BlockStore, index: some BlockIndex & MultipartIndex & ObjectIndex & ObjectCatalog & SweepIndex,
        outbox: any OutboxStore
    ) {
        self.init(
            blobs: blobs, blocks: index, uploads: index, objects: index, catalog: index, sweep: index, outbox: outbox)
    }
}
