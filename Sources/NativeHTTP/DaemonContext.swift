import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What the C callbacks of one daemon share: the Swift handler, body limits, and the registry of
/// live exchanges used to drain before `MHD_stop_daemon`.
final class DaemonContext: Sendable {
    let handler: @Sendable (HTTPExchange) -> Void
    let buffering: BodyBuffering
    let watchdog: HeaderWatchdog
    private let live = Mutex<[ObjectIdentifier: HTTPExchange]>([:])
    private let draining = Atomic<Bool>(false)

    init(handler: @escaping @Sendable (HTTPExchange) -> Void, buffering: BodyBuffering, watchdog: HeaderWatchdog) {
        self.handler = handler
        self.buffering = buffering
        self.watchdog = watchdog
    }

    var isDraining: Bool { draining.load(ordering: .acquiring) }

    func beginDraining() { draining.store(true, ordering: .releasing) }

    func register(_ exchange: HTTPExchange) {
        live.withLock { $0[ObjectIdentifier(exchange)] = exchange }
    }

    func unregister(_ exchange: HTTPExchange) {
        _ = live.withLock { $0.removeValue(forKey: ObjectIdentifier(exchange)) }
    }

    var exchangeCount: Int { live.withLock { $0.count } }

    var exchanges: [HTTPExchange] { live.withLock { Array($0.values) } }

    /// A plain thread sleep: `stop()` is synchronous (it runs from `deinit` too).
    func sleepMilliseconds(_ milliseconds: Int) {
        usleep(UInt32(milliseconds * 1000))
    }
}
