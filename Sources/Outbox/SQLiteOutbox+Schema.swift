import NativeStore

extension SQLiteOutbox {
    /// The migrations that create and evolve an outbox table called `table`, in order. A host
    /// appends them to its own migration list once, when it adopts the outbox, and appends any
    /// later ones as they come: like every shipped migration, these never change.
    ///
    /// One column, `available_at`, says when an entry can next be claimed: `dueAt` while pending,
    /// `leaseUntil` while claimed (NULL once delivered or dead). "Claimable at now" is then one
    /// range over the `(state, available_at)` index, the same for a due entry and an expired claim.
    public static func migrations(table: String) -> [String] {
        let t = checkedName(table)
        return [
            """
            CREATE TABLE \(t) (
                id INTEGER PRIMARY KEY,
                payload TEXT NOT NULL,
                lease_seconds INTEGER NOT NULL CHECK (lease_seconds > 0),
                state TEXT NOT NULL CHECK (state IN ('pending', 'claimed', 'delivered', 'dead')),
                available_at INTEGER,          -- pending: due at; claimed: lease until
                owner TEXT,                    -- claimed: who holds the claim
                attempts INTEGER NOT NULL CHECK (attempts >= 0),
                last_error TEXT,
                reply TEXT,
                created_at INTEGER NOT NULL,
                CHECK ((state IN ('pending', 'claimed')) = (available_at IS NOT NULL)),
                CHECK ((state = 'claimed') = (owner IS NOT NULL))
            ) STRICT;
            CREATE INDEX \(t)_available ON \(t) (state, available_at, id);
            """
        ]
    }

    /// `table` if it is a plain SQL identifier (it is spliced into statements); traps otherwise:
    /// table names are code, never input.
    static func checkedName(_ table: String) -> String {
        let bytes = Array(table.utf8)
        let valid = !bytes.isEmpty && bytes.count <= 64 && !(0x30...0x39).contains(bytes[0])
            && bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }
        precondition(valid, "outbox table name \(table) is not [a-z_][a-z0-9_]*")
        return table
    }

    static let columns = "id, payload, lease_seconds, state, available_at, owner, attempts, last_error, reply, created_at"

    /// The state columns of `delivery`: state, available_at, owner.
    static func stateValues(_ delivery: OutboxDelivery) -> [SQLiteValue] {
        switch delivery.state {
        case .pending(let dueAt): [.text("pending"), .integer(dueAt), .null]
        case .claimed(let owner, let leaseUntil): [.text("claimed"), .integer(leaseUntil), .text(owner)]
        case .delivered: [.text("delivered"), .null, .null]
        case .dead: [.text("dead"), .null, .null]
        }
    }

    /// A row in ``columns`` order.
    static func entry(_ row: SQLiteRow) throws -> OutboxEntry {
        let phase = try row.text(3)
        let state: OutboxDelivery.State
        switch (phase, row[4].integerValue, row[5].textValue) {
        case ("pending", let dueAt?, _): state = .pending(dueAt: dueAt)
        case ("claimed", let leaseUntil?, let owner?): state = .claimed(owner: owner, leaseUntil: leaseUntil)
        case ("delivered", _, _): state = .delivered
        case ("dead", _, _): state = .dead
        default: throw SQLiteError(code: SQLiteError.mismatch, message: "outbox row in state \(phase) is inconsistent")
        }
        return OutboxEntry(
            id: try row.integer(0), payload: try row.text(1), leaseSeconds: try row.integer(2),
            delivery: OutboxDelivery(state: state, attempts: Int(try row.integer(6))), lastError: row[7].textValue,
            reply: row[8].textValue, createdAt: try row.integer(9))
    }
}
