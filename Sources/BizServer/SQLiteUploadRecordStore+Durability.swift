import NativeStore

extension SQLiteUploadRecordStore {
    /// Opens the store with the configuration's durability choice, so callers need not know
    /// SQLite's `synchronous` levels: `true` → FULL (a recorded callback survives power loss),
    /// `false` → NORMAL (survives a process crash; the last commits may be lost on power loss).
    public convenience init(path: String, durableWrites: Bool) throws {
        try self.init(path: path, synchronous: durableWrites ? .full : .normal)
    }
}
