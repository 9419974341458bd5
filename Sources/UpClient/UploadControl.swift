import Synchronization

/// A handle to stop an upload from another task or thread (a Ctrl-C handler, a UI button).
///
/// ``pause()`` cancels the requests in flight at once (the transport closes their sockets) and
/// keeps the checkpoint, so a later ``UploadClient/upload(_:control:progress:)`` with the same
/// request resumes; ``abort()`` also deletes the checkpoint and aborts a v2 upload on the server.
/// A new upload call clears an earlier pause (so one control can pause and resume repeatedly);
/// an abort is final for the control.
public final class UploadControl: Sendable {
    private struct State {
        var paused = false
        var aborted = false
        var cancellers: [Int: @Sendable () -> Void] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    /// Creates a control in the running state.
    public init() {}

    /// Stops the upload promptly and keeps its checkpoint; the call throws ``UploadError/Kind/paused``.
    public func pause() {
        let cancellers = state.withLock { state in
            state.paused = true
            return Array(state.cancellers.values)
        }
        for cancel in cancellers { cancel() }
    }

    /// Stops the upload, deletes its checkpoint and aborts a v2 upload on the server; the call
    /// throws ``UploadError/Kind/aborted``.
    public func abort() {
        let cancellers = state.withLock { state in
            state.aborted = true
            return Array(state.cancellers.values)
        }
        for cancel in cancellers { cancel() }
    }

    /// Whether ``pause()`` was called since the last upload call began.
    public var isPaused: Bool { state.withLock { $0.paused } }

    /// Whether ``abort()`` was called.
    public var isAborted: Bool { state.withLock { $0.aborted } }

    /// Clears a pause at the start of an upload call.
    func begin() {
        state.withLock { $0.paused = false }
    }

    /// Registers `cancel` to run on pause/abort (at once if already stopped); returns the id for
    /// ``unregister(_:)``.
    func register(_ cancel: @escaping @Sendable () -> Void) -> Int {
        let (id, stopped) = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.cancellers[id] = cancel
            return (id, state.paused || state.aborted)
        }
        if stopped { cancel() }
        return id
    }

    /// Removes a canceller registered with ``register(_:)``.
    func unregister(_ id: Int) {
        _ = state.withLock { $0.cancellers.removeValue(forKey: id) }
    }
}
