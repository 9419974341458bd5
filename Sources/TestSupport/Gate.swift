import Synchronization

/// A gate for tests that must hold an operation half-way: tasks that reach ``pass()`` wait there
/// until ``open()``; the test sees how many arrived (``waitForArrivals(_:within:)``) and decides
/// when they go on. Once open, it stays open.
public final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var arrived = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// A closed gate.
    public init() {}

    /// Counts the caller in and waits until the gate is open (not at all if it is).
    public func pass() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let goOn = state.withLock { state in
                state.arrived += 1
                if !state.isOpen { state.waiting.append(continuation) }
                return state.isOpen
            }
            if goOn { continuation.resume() }
        }
    }

    /// How many callers reached the gate so far (waiting or let through).
    public var arrived: Int { state.withLock { $0.arrived } }

    /// Lets every waiting caller through, and every later one.
    public func open() {
        let waiting = state.withLock { state in
            state.isOpen = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Waits until `count` callers reached the gate, polling every 10 ms for at most `within`.
    ///
    /// - Returns: Whether they did.
    public func waitForArrivals(_ count: Int, within limit: Duration = .seconds(10)) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        while arrived < count {
            guard clock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }
}
