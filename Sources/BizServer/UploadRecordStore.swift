public import Outbox

/// Where the biz-server keeps verified upload callbacks, and the webhook deliveries they cause.
///
/// Two implementations pass one behavioural test suite: `SQLiteUploadRecordStore` (production)
/// and `InMemoryUploadRecordStore` (handler tests). Recording is idempotent by
/// (bucket, key, hash), which is what makes callback redelivery safe.
public protocol UploadRecordStore: Sendable {
    /// Records `upload` unless (bucket, key, hash) is already recorded; returns the stored record
    /// and whether it was created now.
    ///
    /// A redelivered callback gets the FIRST record back (same id, same `receivedAt`) and creates
    /// no row, even if other fields differ; the same key with another hash is a new version (a new
    /// row). Safe under concurrent duplicate deliveries: exactly one call reports `created`.
    /// - Parameters:
    ///   - upload: The verified callback.
    ///   - receivedAt: Now, in Unix milliseconds (passed in so tests pin time). Also the
    ///     timestamp part of a new record's id.
    ///   - webhooks: The webhook deliveries a NEW record causes (called with it once it has its id,
    ///     inside the transaction): written to ``webhookDeliveries`` together with the record, all
    ///     or nothing. Not called for a redelivery.
    func record(
        _ upload: NewUploadRecord, receivedAt: Int64, webhooks: @escaping @Sendable (UploadRecord) -> [OutboxMessage]
    ) async throws -> (record: UploadRecord, created: Bool)

    /// The webhook deliveries (`webhook_deliveries` next to the records in SQLite).
    var webhookDeliveries: any OutboxStore { get }

    /// The record with public id `id`, or `nil` if there is none.
    func upload(id: String) async throws -> UploadRecord?

    /// The records `query` selects, newest first (see ``UploadQuery``).
    ///
    /// Pass the last id of one page as `query.after` to get the next. Returns `nil` when `after`
    /// is not the id of one of the client's own records: unknown and another client's ids give
    /// the same answer, so one client's ids reveal nothing about another's.
    func uploads(_ query: UploadQuery) async throws -> [UploadRecord]?

    /// The sizes of the records of `endUser` of client `clientID` recorded at or after `since`
    /// (Unix milliseconds), oldest first: what `maxBytesPerUserPerDay` adds up.
    func uploadSizes(clientID: String, endUser: String, since: Int64) async throws -> [UploadSize]

    /// Number of records (tests and metrics).
    func count() async throws -> Int
}

extension UploadRecordStore {
    /// Records `upload` without webhook deliveries (see ``record(_:receivedAt:webhooks:)``).
    public func record(_ upload: NewUploadRecord, receivedAt: Int64) async throws -> (record: UploadRecord, created: Bool) {
        try await record(upload, receivedAt: receivedAt, webhooks: { _ in [] })
    }

    /// The client's uploads, newest first, at most `limit`, older than the record `after`; an
    /// unknown or foreign `after` gives an empty page. Shorthand for ``uploads(_:)`` without filters.
    public func uploads(clientID: String, limit: Int, after: String?) async throws -> [UploadRecord] {
        try await uploads(UploadQuery(clientID: clientID, limit: limit, after: after)) ?? []
    }
}
