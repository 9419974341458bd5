import Synchronization

extension ServiceHost.BackgroundTask {
    /// A task that runs `body` — a loop that ends when its task is cancelled, such as a poller —
    /// on a Swift task of its own, started with the host and cancelled (and awaited) at its stop.
    public static func running(_ name: String, _ body: @escaping @Sendable () async -> Void) -> Self {
        let slot = TaskSlot()
        return Self(name: name, start: { slot.start(body) }, stop: { await slot.stop() })
    }
}

/// The one running task of a ``ServiceHost/BackgroundTask/running(_:_:)`` task.
private final class TaskSlot: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    func start(_ body: @escaping @Sendable () async -> Void) {
        task.withLock { current in
            if current == nil { current = Task { await body() } }
        }
    }

    func stop() async {
        let running = task.withLock { current -> Task<Void, Never>? in
            defer { current = nil }
            return current
        }
        running?.cancel()
        await running?.value
    }
}
