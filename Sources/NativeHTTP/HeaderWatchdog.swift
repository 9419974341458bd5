internal import CMicroHTTPD
import Dispatch
import Synchronization

/// Cuts connections that take too long to send a request head: the slow-loris defence that
/// libmicrohttpd 0.9.75 lacks. Its `MHD_OPTION_CONNECTION_TIMEOUT` is an *idle* timeout, so a
/// client trickling one header byte every few seconds holds a connection (and its memory pool)
/// for ever.
///
/// A connection is "in its head" from the moment it is accepted, and again from the end of each
/// request until the next request's head is complete (keep-alive: the next head, or idleness,
/// is bounded by the same deadline — as nginx's `client_header_timeout` plus a keep-alive timeout
/// would be). Once a second a timer shuts down (`shutdown(2)`, not `close`) the socket of every
/// connection in its head for longer than the limit; MHD's loop then sees the failure and closes
/// the connection on its own thread.
///
/// The fd stays valid while it is listed: MHD calls `MHD_CONNECTION_NOTIFY_CLOSED` (which
/// unlists it under the same lock the timer holds while it shuts sockets down) before it closes
/// the socket, so the timer never touches a descriptor number that was reused.
final class HeaderWatchdog: Sendable {
    /// One accepted connection.
    private struct Entry {
        var descriptor: Int32
        /// When the current head phase began (monotonic nanoseconds); `nil` while a request is
        /// being read, handled or answered.
        var headSince: UInt64?
    }

    /// Longest head phase, in nanoseconds; 0 disables the watchdog.
    let limitNanoseconds: UInt64
    private let entries = Mutex<[UInt: Entry]>([:])
    private let cutCount = Atomic<Int>(0)
    private let running = Atomic<Bool>(false)

    /// A watchdog cutting heads longer than `limitSeconds` (0: never).
    init(limitSeconds: Int) {
        limitNanoseconds = UInt64(max(0, limitSeconds)) * 1_000_000_000
    }

    /// Connections cut so far.
    var cutConnections: Int { cutCount.load(ordering: .acquiring) }

    /// Starts the once-a-second sweep (nothing when disabled).
    func start() {
        guard limitNanoseconds > 0, !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        scheduleSweep()
    }

    /// Stops the sweep (a sweep already due may still run once).
    func stop() {
        running.store(false, ordering: .releasing)
    }

    private func scheduleSweep() {
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) { [weak self] in
            guard let self, self.running.load(ordering: .acquiring) else { return }
            self.sweep(now: DispatchTime.now().uptimeNanoseconds)
            self.scheduleSweep()
        }
    }

    /// MHD accepted `connection` on `descriptor`.
    func opened(_ connection: UInt, descriptor: Int32, now: UInt64) {
        guard limitNanoseconds > 0 else { return }
        entries.withLock { $0[connection] = Entry(descriptor: descriptor, headSince: now) }
    }

    /// The head of the connection's current request is complete.
    func headComplete(_ connection: UInt) {
        guard limitNanoseconds > 0 else { return }
        entries.withLock { $0[connection]?.headSince = nil }
    }

    /// A request on the connection ended; the next head (or idleness) begins now.
    func requestEnded(_ connection: UInt, now: UInt64) {
        guard limitNanoseconds > 0 else { return }
        entries.withLock { $0[connection]?.headSince = now }
    }

    /// MHD is closing the connection (its socket is still open).
    func closed(_ connection: UInt) {
        guard limitNanoseconds > 0 else { return }
        _ = entries.withLock { $0.removeValue(forKey: connection) }
    }

    /// Shuts down every connection whose head phase began more than the limit before `now`.
    /// - Returns: How many were cut by this call.
    @discardableResult
    func sweep(now: UInt64) -> Int {
        let limit = limitNanoseconds
        return entries.withLock { entries in
            var cut = 0
            for (connection, entry) in entries {
                guard let since = entry.headSince, now > since, now - since > limit else { continue }
                // Counted before the socket goes down: whoever sees the cut (the client) must
                // also see it counted.
                cutCount.add(1, ordering: .releasing)
                cmhd_shutdown_socket(entry.descriptor)
                // Once is enough: MHD closes it soon; do not count it twice meanwhile.
                entries[connection]?.headSince = nil
                cut += 1
            }
            return cut
        }
    }
}
