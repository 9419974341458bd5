import ServerShell

/// Runs an async body every `interval` on a task of its own until stopped — the shape of the
/// up-server's background jobs (outbox retries, sweeps); the task itself is the shell's
/// `BackgroundLoop`.
///
/// The first run happens one interval after `start`, so a server that is started and stopped at
/// once (tests, a failed start) does no work. `stop()` cancels the task and waits for the body
/// in flight to end, so nothing touches the index after `UpServer.shutdown()` returns.
final class PeriodicTask: Sendable {
    private let name: String
    private let loop = BackgroundLoop()

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
        loop.start {
            while !Task.isCancelled {
                do { try await Task.sleep(for: interval) } catch { return }
                await body()
            }
        }
    }

    /// Whether the loop is running.
    var isRunning: Bool { loop.isRunning }

    /// Cancels the loop and waits for it to finish. Idempotent.
    func stop() async { await loop.stop() }
}
