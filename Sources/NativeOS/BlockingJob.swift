import Synchronization

/// Blocking work already running on a ``BlockingExecutor`` whose result the caller collects
/// later with ``value()``: for overlapping one's own work with it (a writer fills its next buffer
/// while the last one is written) without a `Task` around ``BlockingExecutor/run(_:)``.
///
/// Why not that `Task`: it costs a trip through the cooperative pool to start, and another to
/// finish, on top of the pool thread's; on a 2-core VM each wake-up of a thread is a context
/// switch the upload pays for. Here the job goes straight to the pool, and ``value()`` does not
/// suspend at all when the job is already over.
public final class BlockingJob<Value: Sendable>: Sendable {
    private enum State {
        case running
        case waiting(CheckedContinuation<Value, any Error>)
        case over(Result<Value, any Error>)
        case collected
    }

    private let state = Mutex(State.running)

    init() {}

    /// The job's result, waiting for it if it is still running. Call it once.
    public func value() async throws -> Value {
        let over: Result<Value, any Error>? = state.withLock { state in
            guard case .over(let result) = state else { return nil }
            state = .collected
            return result
        }
        if let over { return try over.get() }
        return try await withCheckedThrowingContinuation { continuation in
            let over: Result<Value, any Error>? = state.withLock { state in
                switch state {
                case .running:
                    state = .waiting(continuation)
                    return nil
                case .over(let result):
                    state = .collected
                    return result
                case .waiting, .collected:
                    preconditionFailure("BlockingJob.value() called twice")
                }
            }
            if let over { continuation.resume(with: over) }
        }
    }

    /// Called once, by the pool thread that ran the job.
    func finish(_ result: Result<Value, any Error>) {
        let waiter: CheckedContinuation<Value, any Error>? = state.withLock { state in
            guard case .waiting(let continuation) = state else {
                state = .over(result)
                return nil
            }
            state = .collected
            return continuation
        }
        waiter?.resume(with: result)
    }
}

extension BlockingExecutor {
    /// Starts `work` on the executor and returns at once; collect the result with
    /// ``BlockingJob/value()``.
    public func start<T: Sendable>(_ work: @escaping @Sendable () throws -> T) -> BlockingJob<T> {
        let job = BlockingJob<T>()
        submit { job.finish(Result { try work() }) }
        return job
    }
}
