import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What the C callbacks of one daemon share: the Swift handler, body limits, and the registry of
/// live exchanges used to drain before `MHD_stop_daemon`.
final class DaemonContext: Sendable {
    let handler: @Sendable (HTTPExchange) -> Void
    let buffering: BodyBuffering
    let watchdog: ConnectionWatchdog
    private let live = Mutex(Live())
    private let draining = Atomic<Bool>(false)

    /// The exchanges in flight and, once the daemon is stopping, the answer new ones get instead
    /// of the handler. One lock for both: an exchange either registered before ``beginStopping``
    /// took its snapshot (and is answered by it) or sees the stop and is never suspended, since
    /// `MHD_stop_daemon` aborts the process if a connection is still suspended.
    private struct Live {
        var exchanges: [ObjectIdentifier: HTTPExchange] = [:]
        var stopFallback: RawResponse?
    }

    init(handler: @escaping @Sendable (HTTPExchange) -> Void, buffering: BodyBuffering, watchdog: ConnectionWatchdog) {
        self.handler = handler
        self.buffering = buffering
        self.watchdog = watchdog
    }

    var isDraining: Bool { draining.load(ordering: .acquiring) }

    func beginDraining() { draining.store(true, ordering: .releasing) }

    /// Marks the daemon as stopping and returns the exchanges in flight, which the caller answers
    /// with `fallback`; every later head gets `fallback` from ``register(_:)``.
    func beginStopping(fallback: RawResponse) -> [HTTPExchange] {
        beginDraining()
        // A file body cannot be sent more than once; the stop answer is always bytes.
        let reusable = if case .bytes = fallback.body { fallback } else { RawResponse(status: 503) }
        return live.withLock { live in
            live.stopFallback = reusable
            return Array(live.exchanges.values)
        }
    }

    /// Registers a new exchange, or returns the response to queue at once instead of calling the
    /// handler because the daemon is stopping.
    func register(_ exchange: HTTPExchange) -> RawResponse? {
        live.withLock { live in
            if let fallback = live.stopFallback { return fallback }
            live.exchanges[ObjectIdentifier(exchange)] = exchange
            return nil
        }
    }

    func unregister(_ exchange: HTTPExchange) {
        _ = live.withLock { $0.exchanges.removeValue(forKey: ObjectIdentifier(exchange)) }
    }

    var exchangeCount: Int { live.withLock { $0.exchanges.count } }

    var exchanges: [HTTPExchange] { live.withLock { Array($0.exchanges.values) } }

    /// A plain thread sleep: `stop()` is synchronous (it runs from `deinit` too).
    func sleepMilliseconds(_ milliseconds: Int) {
        usleep(UInt32(milliseconds * 1000))
    }
}
