import Dispatch

/// Where libpq's blocking calls run, so they never hold one of the Swift cooperative pool's
/// threads (one per core: a handler waiting on the network there stalls every other request
/// scheduled on that thread).
///
/// Stand-in until the project's one blocking-work executor (`NativeOS.BlockingExecutor`, branch
/// house-shell) is on main: the same shape (a concurrent GCD queue and a continuation), to be
/// replaced by `BlockingExecutor.shared` then. Concurrency is bounded by the pools: at most one
/// call per pooled connection.
enum BlockingCalls {
    private static let queue = DispatchQueue(label: "upgate.postgres", qos: .userInitiated, attributes: .concurrent)

    /// Runs `work` on the queue and returns its result (or rethrows its error).
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}
