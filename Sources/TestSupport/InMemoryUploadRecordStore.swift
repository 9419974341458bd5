public import BizServer
public import Outbox

/// An `UploadRecordStore` in memory: the twin of `SQLiteUploadRecordStore` for handler tests.
///
/// An actor, so concurrent deliveries are serialized the way the SQLite store's transaction
/// serializes them; both pass the same behavioural suite. Nothing survives the process.
public actor InMemoryUploadRecordStore: UploadRecordStore {
    /// Strings compared as UTF-8 bytes, as SQLite compares TEXT. Swift's `==` on `String` uses
    /// canonical equivalence, so "e\u{301}" and "é" would be one key here and two in SQLite, and an
    /// object store must treat them as the two different keys they are on the wire.
    private struct Bytes: Hashable {
        let utf8: [UInt8]
        init(_ string: String) { utf8 = Array(string.utf8) }
    }

    private struct ObjectIdentity: Hashable {
        var bucket: Bytes
        var key: Bytes
        var hash: Bytes
    }

    /// Records in insertion order; an index here plays the role of SQLite's rowid.
    private var records: [UploadRecord] = []
    private var positionByObject: [ObjectIdentity: Int] = [:]
    private var positionByID: [Bytes: Int] = [:]
    private var ids: UploadRecordIDGenerator
    /// The webhook deliveries (`SQLiteUploadRecordStore`'s `webhook_deliveries` twin); a new
    /// record's are inserted with it, in the same actor step.
    public nonisolated let deliveries = InMemoryOutbox()
    /// See `UploadRecordStore.webhookDeliveries`.
    public nonisolated var webhookDeliveries: any OutboxStore { deliveries }

    /// Creates an empty store.
    ///
    /// - Parameter idGenerator: Makes ids for new records; inject one to control randomness.
    public init(idGenerator: UploadRecordIDGenerator = UploadRecordIDGenerator()) {
        self.ids = idGenerator
    }

    /// See `UploadRecordStore.record(_:receivedAt:)`.
    public func record(
        _ upload: NewUploadRecord, receivedAt: Int64, webhooks: @escaping @Sendable (UploadRecord) -> [OutboxMessage]
    ) throws -> (record: UploadRecord, created: Bool) {
        let identity = ObjectIdentity(bucket: Bytes(upload.bucket), key: Bytes(upload.key), hash: Bytes(upload.hash))
        if let position = positionByObject[identity] {
            return (records[position], false)
        }
        let record = UploadRecord(id: ids.next(milliseconds: receivedAt), upload: upload, receivedAt: receivedAt)
        let messages = webhooks(record)
        // SQLite's CHECK (lease_seconds > 0) rolls the record back with its deliveries: do the same.
        guard messages.allSatisfy({ $0.leaseSeconds > 0 }) else { throw InvalidDelivery() }
        positionByObject[identity] = records.count
        positionByID[Bytes(record.id)] = records.count
        records.append(record)
        for message in messages { deliveries.insert(message, now: receivedAt / 1000) }
        return (record, true)
    }

    /// A delivery the SQLite table's constraints would refuse.
    public struct InvalidDelivery: Error {}

    /// See `UploadRecordStore.upload(id:)`.
    public func upload(id: String) -> UploadRecord? {
        positionByID[Bytes(id)].map { records[$0] }
    }

    /// See `UploadRecordStore.uploads(_:)`.
    public func uploads(_ query: UploadQuery) -> [UploadRecord]? {
        var end = records.endIndex
        if let after = query.after {
            // Same rule as the SQLite store: a cursor from another client is unknown here.
            guard let position = positionByID[Bytes(after)], Bytes(records[position].clientID) == Bytes(query.clientID)
            else { return nil }
            end = position
        }
        guard query.limit > 0 else { return [] }
        return Array(records[..<end].reversed().lazy.filter(query.matches).prefix(query.limit))
    }

    /// See `UploadRecordStore.uploadSizes(clientID:endUser:since:)`.
    public func uploadSizes(clientID: String, endUser: String, since: Int64) -> [UploadSize] {
        records.filter { UploadQuery.same($0.clientID, clientID) && UploadQuery.same($0.endUser, endUser) && $0.receivedAt >= since }
            .map { UploadSize(receivedAt: $0.receivedAt, fsize: $0.fsize) }
            .sorted { $0.receivedAt < $1.receivedAt }
    }

    /// See `UploadRecordStore.count()`.
    public func count() -> Int { records.count }
}
