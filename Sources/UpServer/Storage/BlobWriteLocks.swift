import Synchronization

/// At most one writer per blob inside this process.
///
/// `BlockStore.append` truncates whatever lies past the acknowledged offset, which is right after
/// a crash and wrong while a second request is writing: two concurrent chunks for one block (a
/// client retrying while its first attempt still runs) would cut each other's bytes. The handler
/// takes the blob here for the whole "check offset → append → advance index" step.
///
/// A second request for a held blob **preempts** the holder (``withPreemptibleLock(_:grace:_:)``):
/// qiniu-protocol.md §4.2 makes the chunks of one block strictly sequential, so a second request
/// means the client gave up on the first — typically a client killed or timed out mid-chunk whose
/// first request is still waiting for body bytes that will never come. scripts/chaos/client-crash
/// found such holders outliving their client (libmicrohttpd never reported the closed connection)
/// until the 30 s handler timeout, so every resume of that block got 599 in the meantime. The
/// holder's work is cancelled (its unacknowledged bytes are cut back by the next append), and the
/// newcomer takes the blob once the holder has let go; only if it does not let go within the grace
/// does the newcomer fail fast with `busy` (599, which the SDKs retry).
///
/// Several up-server nodes sharing one store need a lock the nodes share; this is not it.
public final class BlobWriteLocks: Sendable {
    private struct Holder: Sendable {
        var id: UInt64
        /// Cancels the holder's work; nil until the work has started.
        var preempt: (@Sendable () -> Void)?
        /// A preemption that came before the work started: cancel it as soon as it does.
        var preempted = false
    }

    private struct State: Sendable {
        var held: [BlobID: Holder] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Creates an empty lock table.
    public init() {}

    /// Runs `body` holding `blob`.
    ///
    /// - Throws: `BlockStoreError.busy` if another caller holds `blob`, or what `body` throws.
    public func withLock<T>(_ blob: BlobID, _ body: () throws -> T) throws -> T {
        guard let id = take(blob, preempt: nil) else { throw BlockStoreError.busy(blob) }
        defer { release(blob, id) }
        return try body()
    }

    /// Runs async `body` holding `blob`, without preemption.
    ///
    /// - Throws: `BlockStoreError.busy` if another caller holds `blob`, or what `body` throws.
    public func withLock<T>(_ blob: BlobID, _ body: () async throws -> T) async throws -> T {
        guard let id = take(blob, preempt: nil) else { throw BlockStoreError.busy(blob) }
        defer { release(blob, id) }
        return try await body()
    }

    /// Runs `body` holding `blob`, in a task of its own that a later caller for the same blob may
    /// cancel (see the type's notes); a holder found here is cancelled, and this call waits up to
    /// `grace` for it to let go. Cancelling the calling task cancels `body` too. The blob is
    /// released only when `body` has really ended.
    ///
    /// - Throws: `BlockStoreError.busy` if the holder did not let go within `grace`, what `body`
    ///   throws (`CancellationError` when it was preempted), or `CancellationError`.
    public func withPreemptibleLock<T: Sendable>(
        _ blob: BlobID, grace: Duration = .seconds(2), _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        var id = take(blob, preempt: nil)
        if id == nil {
            preemptHolder(of: blob)
            let clock = ContinuousClock()
            let deadline = clock.now + grace
            while id == nil, clock.now < deadline, !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(5))
                id = take(blob, preempt: nil)
            }
        }
        guard let id else { throw Task.isCancelled ? CancellationError() : BlockStoreError.busy(blob) }
        defer { release(blob, id) }
        let work = Task { try await body() }
        if install(blob, id, preempt: { work.cancel() }) { work.cancel() }
        return try await withTaskCancellationHandler {
            try await work.value
        } onCancel: {
            work.cancel()
        }
    }

    /// Whether some caller holds `blob` now (tests, metrics).
    public func isHeld(_ blob: BlobID) -> Bool { state.withLock { $0.held[blob] != nil } }

    /// How many blobs are held now (tests).
    public var heldCount: Int { state.withLock { $0.held.count } }

    private func take(_ blob: BlobID, preempt: (@Sendable () -> Void)?) -> UInt64? {
        state.withLock { state in
            guard state.held[blob] == nil else { return nil }
            state.nextID += 1
            state.held[blob] = Holder(id: state.nextID, preempt: preempt)
            return state.nextID
        }
    }

    private func release(_ blob: BlobID, _ id: UInt64) {
        state.withLock { state in
            if state.held[blob]?.id == id { state.held[blob] = nil }
        }
    }

    /// Sets the holder's cancel action; returns true if it was preempted before (cancel now).
    private func install(_ blob: BlobID, _ id: UInt64, preempt: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard state.held[blob]?.id == id else { return false }
            state.held[blob]?.preempt = preempt
            return state.held[blob]?.preempted ?? false
        }
    }

    private func preemptHolder(of blob: BlobID) {
        let preempt = state.withLock { state -> (@Sendable () -> Void)? in
            guard state.held[blob] != nil else { return nil }
            if let preempt = state.held[blob]?.preempt { return preempt }
            state.held[blob]?.preempted = true
            return nil
        }
        preempt?()
    }
}
