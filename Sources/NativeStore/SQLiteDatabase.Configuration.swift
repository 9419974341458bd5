extension SQLiteDatabase {
    /// How a connection is set up when it opens. Every default is chosen for acknowledged data.
    public struct Configuration: Sendable, Equatable {
        /// How long a statement waits for another connection's lock before failing with
        /// `SQLITE_BUSY`. Default 5 s: long enough to ride out a checkpoint, short enough that a
        /// stuck writer shows up as an error instead of a hung request.
        public var busyTimeout: Duration
        /// When SQLite waits for the disk. Default `.full`.
        public var synchronous: Synchronous
        /// Whether to switch to write-ahead logging. Default `true`: readers do not block the
        /// writer, and with `.full` every commit is durable after one fsync of the log. Ignored
        /// for in-memory databases, which have no log.
        public var writeAheadLog: Bool
        /// Whether FOREIGN KEY clauses are enforced. Default `true`; SQLite's own default is off
        /// for backward compatibility, which nobody writing a new schema wants.
        public var foreignKeys: Bool
        /// Most statements kept by `withStatement(_:_:)`. Default 64. SQL keyed by text must come
        /// from code, not data; the cap only guards against a caller that forgets this.
        public var statementCacheCapacity: Int

        /// Creates a configuration; every parameter has the default documented on its property.
        public init(
            busyTimeout: Duration = .seconds(5),
            synchronous: Synchronous = .full,
            writeAheadLog: Bool = true,
            foreignKeys: Bool = true,
            statementCacheCapacity: Int = 64
        ) {
            self.busyTimeout = busyTimeout
            self.synchronous = synchronous
            self.writeAheadLog = writeAheadLog
            self.foreignKeys = foreignKeys
            self.statementCacheCapacity = statementCacheCapacity
        }
    }

    /// `PRAGMA synchronous`: how much SQLite waits for the disk on commit.
    ///
    /// In WAL mode `.full` fsyncs the log on every commit, so a committed transaction survives
    /// power loss: use it for anything acknowledged to a peer (an upload record acknowledged to the
    /// up-server must not vanish). `.normal` fsyncs only at checkpoints: still never corrupt, but
    /// the last commits before a power cut may roll back. A process crash (kill -9) loses nothing
    /// in either mode, since the OS still holds the written pages.
    public enum Synchronous: String, Sendable, CaseIterable {
        /// No fsync at all; a power cut may corrupt the database. Tests and throw-away data only.
        case off = "OFF"
        /// fsync at checkpoints only (WAL): consistent, but recent commits may be lost on power loss.
        case normal = "NORMAL"
        /// fsync on every commit: committed means durable.
        case full = "FULL"
        /// Like `.full`, and also fsyncs the directory after deleting a rollback journal.
        case extra = "EXTRA"
    }
}
