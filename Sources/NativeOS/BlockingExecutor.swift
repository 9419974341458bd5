import Dispatch
import Synchronization

/// Where blocking work runs — disk reads and writes, `fsync`, SQLite calls — so it never holds
/// one of the Swift cooperative pool's threads (one per core: a handler waiting on the disk there
/// stalls every other request scheduled on that thread). The caller suspends on a continuation
/// until the work has run on a GCD queue.
///
/// The one executor of the code base: ``shared`` (concurrent) for independent calls such as blob
/// file I/O, and a serial one per ``BlockingResource`` for a connection that must be used one
/// call at a time.
public final class BlockingExecutor: Sendable {
    /// Concurrent, for independent blocking calls (blob files, directory removals).
    public static let shared = BlockingExecutor(label: "upgate.blocking", concurrent: true)

    private let queue: DispatchQueue

    /// Creates an executor on a queue of its own.
    ///
    /// - Parameters:
    ///   - label: The queue's name (shown by debuggers and in crash reports).
    ///   - concurrent: Whether calls may run at the same time; serial by default.
    public init(label: String, concurrent: Bool = false) {
        queue = DispatchQueue(
            label: label, qos: .userInitiated, attributes: concurrent ? [.concurrent] : [])
    }

    /// Runs `work` on the executor's queue and returns its result (or rethrows its error).
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}

/// A resource that is not `Sendable` (a SQLite connection) confined to a serial
/// ``BlockingExecutor`` of its own: every use runs there, one at a time, off the cooperative pool.
///
/// The resource sits in a `Mutex` so the compiler can see that one thread at a time touches it;
/// taken only on the serial queue, the lock is never contended.
public final class BlockingResource<Resource>: Sendable {
    private let executor: BlockingExecutor
    private let resource: Mutex<Resource>

    /// Takes ownership of `resource`.
    ///
    /// - Parameter label: The serial queue's name.
    public init(label: String, _ resource: sending Resource) {
        executor = BlockingExecutor(label: label)
        self.resource = Mutex(resource)
    }

    /// Runs `work` with the resource on its queue, suspending the caller until it ends.
    public func use<T: Sendable>(_ work: @escaping @Sendable (inout Resource) throws -> T) async throws -> T {
        try await executor.run { try self.resource.withLock { try work(&$0) } }
    }
}
