import Dispatch

/// Runs blocking work (file reads and writes, fsync) on a GCD queue instead of the Swift
/// cooperative pool, which has one thread per core: a handler waiting on the disk there would
/// stall every other request on that thread.
enum BlockingWork {
    private static let queue = DispatchQueue(label: "upgate.up-server.io", qos: .userInitiated, attributes: .concurrent)

    /// Runs `work` off the cooperative pool and returns its result.
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}
