import NativePostgres

extension PostgresOutbox {
    /// The migrations that create and evolve an outbox table called `table` on PostgreSQL, in
    /// order (the twin of ``SQLiteOutbox/migrations(table:)``): a host appends them to its own
    /// migration list once, and later ones as they come; shipped migrations never change.
    ///
    /// `available_at` means what it means in SQLite: `dueAt` while pending, `leaseUntil` while
    /// claimed, NULL once delivered or dead, so "claimable at now" is one range over
    /// `(state, available_at)` for due entries and expired claims alike.
    public static func migrations(table: String) -> [String] {
        let t = SQLiteOutbox.checkedName(table)
        return [
            """
            CREATE TABLE \(t) (
                id bigserial PRIMARY KEY,
                payload text NOT NULL,
                lease_seconds bigint NOT NULL CHECK (lease_seconds > 0),
                state text NOT NULL CHECK (state IN ('pending', 'claimed', 'delivered', 'dead')),
                available_at bigint,
                owner text,
                attempts integer NOT NULL CHECK (attempts >= 0),
                last_error text,
                reply text,
                created_at bigint NOT NULL,
                CHECK ((state IN ('pending', 'claimed')) = (available_at IS NOT NULL)),
                CHECK ((state = 'claimed') = (owner IS NOT NULL))
            );
            CREATE INDEX \(t)_available ON \(t) (state, available_at, id);
            """
        ]
    }

    static let columns = "id, payload, lease_seconds, state, available_at, owner, attempts, last_error, reply, created_at"

    /// The state columns of `delivery`: state, available_at, owner.
    static func stateValues(_ delivery: OutboxDelivery) -> [PostgresValue] {
        switch delivery.state {
        case .pending(let dueAt): [.text("pending"), .integer(dueAt), .null]
        case .claimed(let owner, let leaseUntil): [.text("claimed"), .integer(leaseUntil), .text(owner)]
        case .delivered: [.text("delivered"), .null, .null]
        case .dead: [.text("dead"), .null, .null]
        }
    }

    /// A row in ``columns`` order (further columns are ignored).
    static func entry(_ row: PostgresRow) throws -> OutboxEntry {
        let phase = try row.decode(3, as: String.self)
        let state: OutboxDelivery.State
        switch (phase, try row.decode(4, as: Int64?.self), try row.decode(5, as: String?.self)) {
        case ("pending", let dueAt?, _): state = .pending(dueAt: dueAt)
        case ("claimed", let leaseUntil?, let owner?): state = .claimed(owner: owner, leaseUntil: leaseUntil)
        case ("delivered", _, _): state = .delivered
        case ("dead", _, _): state = .dead
        default: throw PostgresError(.typeMismatch, message: "outbox row in state \(phase) is inconsistent")
        }
        return OutboxEntry(
            id: try row.decode(0), payload: try row.decode(1), leaseSeconds: try row.decode(2),
            delivery: OutboxDelivery(state: state, attempts: try row.decode(6)), lastError: try row.decode(7),
            reply: try row.decode(8), createdAt: try row.decode(9))
    }
}
