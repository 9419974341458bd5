import Synchronization

extension ServiceHost.BackgroundTask {
    /// A task that runs `body` — a loop that ends when its task is cancelled, such as a poller —
    /// on a Swift task of its own, started with the host and cancelled (and awaited) at its stop.
    public static func running(_ name: String, _ body: @escaping @Sendable () async -> Void) -> Self {
        let loop = BackgroundLoop()
        return Self(name: name, start: { loop.start(body) }, stop: { await loop.stop() })
    }
}

/// One long-running body on a Swift task of its own: started once, cancelled and awaited by
/// ``stop()`` — the shape of every background job (key pollers, outbox retries, sweeps).
public final class BackgroundLoop: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Creates a stopped loop.
    public init() {}

    /// Starts `body` unless it is already running.
    public func start(_ body: @escaping @Sendable () async -> Void) {
        task.withLock { current in
            if current == nil { current = Task { await body() } }
        }
    }

    /// Whether the body is running.
    public var isRunning: Bool { task.withLock { $0 != nil } }

    /// Cancels the body and waits for it to end, so nothing it touches is used afterwards.
    /// Idempotent.
    public func stop() async {
        let running = task.withLock { current -> Task<Void, Never>? in
            defer { current = nil }
            return current
        }
        running?.cancel()
        await running?.value
    }
}
