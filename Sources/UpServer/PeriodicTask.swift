import Synchronization

/// Runs an async body every `interval` on a task of its own until stopped — the shape of the
/// up-server's background jobs (outbox retries, sweeps).
///
/// The first run happens one interval after `start`, so a server that is started and stopped at
/// once (tests, a failed start) does no work. `stop()` cancels the task and waits for the body
/// in flight to end, so nothing touches the index after `UpServer.shutdown()` returns.
final class PeriodicTask: Sendable {
    private let name: String
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Creates a stopped task; `name` is for debugging only.
    init(name: String) {
        self.name = name
    }

    /// Starts the loop unless it is already running.
    ///
    /// - Parameters:
    ///   - interval: Pause between the end of one run and the start of the next.
    ///   - body: One run; cancellation of the surrounding task is visible to it.
    func start(every interval: Duration, _ body: @escaping @Sendable () async -> Void) {
        task.withLock { current in
            guard current == nil else { return }
            current = Task {
                while !Task.isCancelled {
                    do { try await Task.sleep(for: interval) } catch { return }
                    await body()
                }
            }
        }
    }

    /// Whether the loop is running.
    var isRunning: Bool { task.withLock { $0 != nil } }

    /// Cancels the loop and waits for it to finish. Idempotent.
    func stop() async {
        let running = task.withLock { current -> Task<Void, Never>? in
            defer { current = nil }
            return current
        }
        running?.cancel()
        await running?.value
    }
}
