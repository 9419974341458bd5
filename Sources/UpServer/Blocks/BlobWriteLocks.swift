import Synchronization

/// At most one writer per blob inside this process.
///
/// `BlockStore.append` truncates whatever lies past the acknowledged offset, which is right after
/// a crash and wrong while a second request is writing: two concurrent chunks for one block (a
/// client retrying while its first attempt still runs) would cut each other's bytes. The bput
/// handler holds the blob here for the whole "check offset → append → advance index" step, and a
/// second request for the same blob takes over from the first (``takeOver(_:_:)``;
/// qiniu-protocol.md §4.2: chunks of one block are strictly sequential, so a concurrent one is a
/// client retry, not a queue).
///
/// Several up-server nodes sharing one store need a lock the nodes share; this is not it. On
/// such a store (`BlockStore.isShared`) a failed chunk therefore does not cut its block back,
/// a chunk checks the block's row before each append (the retry may have been acknowledged on
/// another node meanwhile), and the blob after its last (`BlockUploadRunner`).
public final class BlobWriteLocks: Sendable {
    /// Creates an empty table.
    public init() {}

    /// A writer of one blob under ``takeOver(_:_:)``: how to cancel it and when it has stopped.
    private struct Writer: Sendable {
        let id: UInt64
        let cancel: @Sendable () -> Void
        let stopped: Task<Void, Never>
    }

    private let writers = Mutex<(next: UInt64, current: [BlobID: Writer])>((0, [:]))

    /// Runs `body` as the only writer of `blob`, taking over from a writer already running: that
    /// one is cancelled, and `body` starts only once it has stopped (its in-flight write done).
    ///
    /// This is for bput (qiniu-protocol.md §4.2): a request for the same block at the same
    /// acknowledged offset can only come from a client that gave up on the earlier one — its
    /// connection died, or it timed out — and libmicrohttpd may not notice a dead connection
    /// until its timeout, so refusing the newcomer would keep
    /// the block stuck for that long. The earlier request was never acknowledged, so stopping it
    /// loses nothing; `append` cuts its unacknowledged bytes back to the offset the newcomer
    /// writes at, and the index's compare-and-set on the offset stops any late advance.
    public func takeOver<T: Sendable>(
        _ blob: BlobID, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let task: Task<T, any Error> = writers.withLock { state in
            state.next += 1
            let id = state.next
            let previous = state.current[blob]
            previous?.cancel()
            let task = Task {
                if let previous { await previous.stopped.value }
                try Task.checkCancellation()
                return try await body()
            }
            let stopped = Task {
                _ = await task.result
                self.writers.withLock { if $0.current[blob]?.id == id { $0.current[blob] = nil } }
            }
            state.current[blob] = Writer(id: id, cancel: { task.cancel() }, stopped: stopped)
            return task
        }
        return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    }

    /// Whether some request is writing `blob` now (tests).
    public func isHeld(_ blob: BlobID) -> Bool { writers.withLock { $0.current[blob] != nil } }
}
