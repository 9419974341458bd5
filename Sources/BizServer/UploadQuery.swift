/// Which upload records `GET /v1/uploads` asks a store for: one client's, newest first, at most
/// `limit`, strictly older than the record `after` names, and matching every filter that is set.
///
/// Filters compare exactly, byte for byte (as SQLite compares TEXT): `demo/a` does not match
/// `demo/A` or `demo/a/`. None of them widens the client scope: another client's records never match.
public struct UploadQuery: Sendable, Equatable {
    /// The client whose records are listed.
    public var clientID: String
    /// At most this many records; 0 or less gives an empty page.
    public var limit: Int
    /// The id of the last record of the previous page, if any: only older records are listed.
    public var after: String?
    /// Only records of this object key.
    public var key: String?
    /// Only records with this trace id.
    public var traceID: String?
    /// Only records of this end user (the policy's `endUser`; a JWT's `sub`).
    public var endUser: String?

    /// Creates a query; every filter is optional.
    public init(
        clientID: String, limit: Int, after: String? = nil, key: String? = nil, traceID: String? = nil,
        endUser: String? = nil
    ) {
        self.clientID = clientID
        self.limit = limit
        self.after = after
        self.key = key
        self.traceID = traceID
        self.endUser = endUser
    }

    /// Whether `record` passes the client scope and the filters (the cursor is not a filter).
    /// The in-memory store's whole matching rule; SQLite's is the same rule in SQL.
    public func matches(_ record: UploadRecord) -> Bool {
        Self.same(record.clientID, clientID) && key.map { Self.same(record.key, $0) } != false
            && traceID.map { Self.same(record.traceID, $0) } != false
            && endUser.map { Self.same(record.endUser, $0) } != false
    }

    /// Byte equality: Swift's `==` on `String` would call "e\u{301}" and "é" equal, SQLite does not.
    public static func same(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }
}
