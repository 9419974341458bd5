import Synchronization

/// At most one writer per blob inside this process.
///
/// `BlockStore.append` truncates whatever lies past the acknowledged offset, which is right after
/// a crash and wrong while a second request is writing: two concurrent chunks for one block (a
/// client retrying while its first attempt still runs) would cut each other's bytes. The handler
/// takes the blob here for the whole "check offset → append → advance index" step; a second
/// request for the same blob fails fast instead of waiting (qiniu-protocol.md §4.2: chunks of
/// one block are strictly sequential, so a concurrent one is a client retry, not a queue).
///
/// Several up-server nodes sharing one store need a lock the nodes share; this is not it.
public final class BlobWriteLocks: Sendable {
    private let held = Mutex<Set<BlobID>>([])

    /// Creates an empty lock table.
    public init() {}

    /// Runs `body` holding `blob`.
    ///
    /// - Throws: `BlockStoreError.busy` if another caller holds `blob`, or what `body` throws.
    public func withLock<T>(_ blob: BlobID, _ body: () throws -> T) throws -> T {
        guard held.withLock({ $0.insert(blob).inserted }) else { throw BlockStoreError.busy(blob) }
        defer { _ = held.withLock { $0.remove(blob) } }
        return try body()
    }

    /// Whether some caller holds `blob` now (tests, metrics).
    public func isHeld(_ blob: BlobID) -> Bool { held.withLock { $0.contains(blob) } }
}
