internal import Foundation
import Synchronization
#if canImport(Glibc)
internal import Glibc
#endif

/// A POSIX signal a process may be asked to handle.
public struct ProcessSignal: Hashable, Sendable, CustomStringConvertible {
    /// The signal number.
    public let number: Int32

    /// Creates a signal from its number.
    public init(_ number: Int32) { self.number = number }

    /// `SIGINT` (Ctrl-C).
    public static let interrupt = ProcessSignal(SIGINT)
    /// `SIGTERM` (`kill`, systemd's stop).
    public static let terminate = ProcessSignal(SIGTERM)
    /// `SIGHUP` (`kill -HUP`, systemd's reload): the servers reload their configuration.
    public static let hangUp = ProcessSignal(SIGHUP)

    /// `SIGINT`, `SIGTERM`, `SIGHUP`, else `signal <n>`.
    public var description: String {
        switch number {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        default: "signal \(number)"
        }
    }
}

/// Process-wide signal handling, here because dispositions are C function pointers (`SIG_IGN`,
/// `SIG_DFL`, a handler), which safe modules may not touch.
///
/// Signals are delivered without polling, by the self-pipe pattern: the handler, in signal
/// context, only writes the signal's number to a non-blocking pipe (`write` is async-signal-safe;
/// no lock, no allocation); one thread blocks reading the pipe and calls each observer in
/// ordinary thread context, whatever thread the kernel interrupted.
public enum ProcessSignals {
    /// Ignores `SIGPIPE`, so a client closing its socket mid-write cannot kill the process.
    public static func ignoreBrokenPipe() { _ = signal(SIGPIPE, SIG_IGN) }

    /// Calls `handler` once for every delivery of one of `signals`, on the signal thread (never
    /// in signal context), until the returned observation is cancelled. While any observation
    /// of a signal exists, the signal no longer has its default effect (SIGINT, SIGTERM and
    /// SIGHUP would end the process); when the last is cancelled, the default is restored.
    ///
    /// `handler` must return quickly: the thread delivers every signal of the process.
    public static func observe(
        _ signals: Set<ProcessSignal>, _ handler: @escaping @Sendable (ProcessSignal) -> Void
    ) -> SignalObservation {
        SignalHub.shared.add(signals, handler)
    }

    /// The deliveries of `signals` as an async sequence, and the observation to cancel when done
    /// (cancelling also finishes the sequence).
    public static func stream(_ signals: Set<ProcessSignal>) -> (AsyncStream<ProcessSignal>, SignalObservation) {
        let (stream, continuation) = AsyncStream.makeStream(of: ProcessSignal.self)
        let observation = observe(signals) { continuation.yield($0) }
        observation.onCancel { continuation.finish() }
        return (stream, observation)
    }
}

/// One ``ProcessSignals/observe(_:_:)`` registration.
public final class SignalObservation: Sendable {
    let id: Int
    private let cancelled = Mutex<(done: Bool, actions: [@Sendable () -> Void])>((false, []))

    init(id: Int) { self.id = id }

    /// Stops the deliveries to this observation's handler. Idempotent.
    public func cancel() {
        let actions = cancelled.withLock { state -> [@Sendable () -> Void]? in
            guard !state.done else { return nil }
            state.done = true
            defer { state.actions = [] }
            return state.actions
        }
        guard let actions else { return }
        SignalHub.shared.remove(id)
        for action in actions { action() }
    }

    fileprivate func onCancel(_ action: @escaping @Sendable () -> Void) {
        cancelled.withLock { $0.actions.append(action) }
    }

    deinit { SignalHub.shared.remove(id) }
}

/// The pipe's write end, read by the handler in signal context: an atomic, initialised before
/// any handler is installed, so signal context never runs a lazy initialiser or takes a lock.
private let signalPipeWriteEnd = Atomic<Int32>(-1)

/// The handler installed for every observed signal: one byte into the pipe, errno preserved.
private func forwardSignal(_ number: Int32) {
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: number)
    _ = unsafe write(signalPipeWriteEnd.load(ordering: .acquiring), &byte, 1)
    errno = saved
}

/// The observers, the pipe and the thread that reads it (started with the first observer).
private final class SignalHub: Sendable {
    static let shared = SignalHub()

    private struct State {
        var nextID = 0
        var observers: [Int: (signals: Set<ProcessSignal>, handler: @Sendable (ProcessSignal) -> Void)] = [:]
        var installed: Set<Int32> = []
        var readEnd: Int32 = -1
    }

    private let state = Mutex(State())

    func add(_ signals: Set<ProcessSignal>, _ handler: @escaping @Sendable (ProcessSignal) -> Void) -> SignalObservation {
        state.withLock { state in
            if state.readEnd < 0 { state.readEnd = Self.startReader() }
            let id = state.nextID
            state.nextID += 1
            state.observers[id] = (signals, handler)
            for requested in signals where !state.installed.contains(requested.number) {
                _ = signal(requested.number, forwardSignal)
                state.installed.insert(requested.number)
            }
            return SignalObservation(id: id)
        }
    }

    func contains(_ id: Int) -> Bool { state.withLock { $0.observers[id] != nil } }

    func remove(_ id: Int) {
        state.withLock { state in
            guard state.observers.removeValue(forKey: id) != nil else { return }
            let wanted = Set(state.observers.values.flatMap { $0.signals.map(\.number) })
            for number in state.installed where !wanted.contains(number) {
                _ = signal(number, SIG_DFL)
                state.installed.remove(number)
            }
        }
    }

    private func deliver(_ number: Int32) {
        let signal = ProcessSignal(number)
        let handlers = state.withLock { state in
            state.observers.values.filter { $0.signals.contains(signal) }.map(\.handler)
        }
        for handler in handlers { handler(signal) }
    }

    /// Creates the pipe (write end non-blocking: a full pipe drops a signal rather than blocking
    /// the interrupted thread) and the thread blocked in `read` on it; returns the read end.
    private static func startReader() -> Int32 {
        var ends: [Int32] = [-1, -1]
        guard unsafe pipe(&ends) == 0 else { preconditionFailure("pipe: \(SystemError.message(errno))") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        signalPipeWriteEnd.store(ends[1], ordering: .releasing)
        let readEnd = ends[0]
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 64)
            while true {
                let count = unsafe buffer.withUnsafeMutableBytes { unsafe read(readEnd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return }
                for byte in buffer[..<count] { SignalHub.shared.deliver(Int32(byte)) }
            }
        }
        thread.name = "upgate.signals"
        thread.start()
        return readEnd
    }
}
