import Synchronization

/// A handle to stop an upload from another task or thread (a Ctrl-C handler, a UI button).
///
/// ``pause()`` cancels the requests in flight at once (the transport closes their sockets) and
/// keeps the checkpoint, so a later ``UploadClient/upload(_:control:progress:onStart:)`` with the
/// same request resumes; ``abort()`` also deletes the checkpoint and aborts a v2 upload on the
/// server. A new upload call clears an earlier pause (so one control can pause and resume
/// repeatedly); an abort is final for the control.
///
/// For apps ported from the iOS SDKs: ``cancel(removingCheckpoint:)`` is their `cancel:` —
/// `cancel(removingCheckpoint: false)` is `cancel:NO` (pause, resume later from the checkpoint),
/// `cancel(removingCheckpoint: true)` is `cancel:YES` (abort, nothing left to resume).
///
/// ```swift
/// let control = UploadControl()
/// let upload = Task { try await client.upload(request, control: control) }
/// control.cancel(removingCheckpoint: false)   // user taps Pause: throws .paused, checkpoint kept
/// // … later, the same request (same checkpointPath) continues where it stopped:
/// let result = try await client.upload(request, control: control)
/// ```
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

    /// Stops the upload the way the iOS SDKs' `cancel:` does: `false` is ``pause()`` (the
    /// checkpoint stays, the same request resumes later), `true` is ``abort()`` (the checkpoint
    /// is deleted and a v2 upload aborted on the server).
    public func cancel(removingCheckpoint: Bool) {
        if removingCheckpoint { abort() } else { pause() }
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
