internal import CMicroHTTPD
import Dispatch
import Synchronization

/// Cuts connections that libmicrohttpd 0.9.75 would hold for a long time or for ever. Every
/// ``sweepInterval`` it looks at every connection and shuts down (`shutdown(2)`, not `close`)
/// the socket of:
///
/// 1. **A head that takes too long** — the slow-loris defence. MHD's
///    `MHD_OPTION_CONNECTION_TIMEOUT` is an *idle* timeout, so a client trickling one header byte
///    every few seconds holds a connection (and its memory pool) for ever. A connection is "in
///    its head" from the moment it is accepted, and again from the end of each request until the
///    next request's head is complete (keep-alive: the next head, or idleness, is bounded by the
///    same deadline — as nginx's `client_header_timeout` plus a keep-alive timeout would be).
/// 2. **A body that can never complete** — the client half-closed (sent FIN) before the whole
///    body: its socket holds no more bytes and is at end of stream, the request is still reading
///    its body, Swift is not holding the connection back (not suspended, no response given), and
///    no byte arrived since the previous sweep. MHD's edge-triggered epoll loop misses an
///    end-of-stream that arrives together with the last bytes (a short read clears its
///    "readable" flag), so such a request used to wait for the handler timeout and its answer
///    was never sent. A client that half-closes *after* a complete body is untouched: its
///    request is no longer reading a body.
///
/// MHD's loop then sees the failure and closes the connection on its own thread; the handler's
/// body read fails at once with "connection closed".
///
/// 3. **An answer held back by a body that stopped** — not a cut. A request answered while its
///    body still arrives (its deadline's 503) gets the answer written with the body's next piece
///    (``EarlyResponse``), since MHD sends only after the body. When no byte has come for two
///    sweeps, the watchdog writes it instead, under its lock (the socket stays valid), and shuts
///    the sending side; MHD goes on discarding whatever the client still sends until it closes.
///    Without it a client that stalled mid-body heard nothing until MHD's idle timeout.
///
/// The fd stays valid while it is listed: MHD calls `MHD_CONNECTION_NOTIFY_CLOSED` (which
/// unlists it under the same lock the timer holds while it looks at sockets) before it closes
/// the socket, so the timer never touches a descriptor number that was reused.
final class ConnectionWatchdog: Sendable {
    /// One accepted connection.
    private struct Entry {
        var descriptor: Int32
        /// When the current head phase began (monotonic nanoseconds); `nil` while a request is
        /// being read, handled or answered.
        var headSince: UInt64?
        /// The request whose body is being read, once its head is complete.
        var body: BodyWatch?
    }

    /// A request reading its body, and what the last sweep saw of it.
    private struct BodyWatch {
        let exchange: HTTPExchange
        /// Bytes received when the previous sweep found the client gone and the body stalled.
        var stalledAt: Int?
    }

    /// Longest head phase, in nanoseconds; 0 disables the head deadline.
    let limitNanoseconds: UInt64
    private let entries = Mutex<[UInt: Entry]>([:])
    private let headCuts = Atomic<Int>(0)
    private let bodyCuts = Atomic<Int>(0)
    private let running = Atomic<Bool>(false)

    /// A watchdog cutting heads longer than `limitSeconds` (0: never) and abandoned bodies.
    init(limitSeconds: Int) {
        limitNanoseconds = UInt64(max(0, limitSeconds)) * 1_000_000_000
    }

    /// Connections cut so far for a head over the limit.
    var cutConnections: Int { headCuts.load(ordering: .acquiring) }

    /// Connections cut so far because their client half-closed in the middle of a body.
    var abandonedBodies: Int { bodyCuts.load(ordering: .acquiring) }

    /// Time between sweeps: a body whose client went away is cut 250–500 ms after its last
    /// bytes (two sweeps). It was a second, which let a request whose client had given up on it
    /// and sent the chunk again elsewhere run on for up to two (docs/ARCHITECTURE.md, "Past one
    /// machine"); a sweep costs a lock and a `recv` peek per connection reading a body.
    static let sweepInterval: Double = 0.25

    /// Starts the sweeps.
    func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        scheduleSweep()
    }

    /// Stops the sweep (a sweep already due may still run once).
    func stop() {
        running.store(false, ordering: .releasing)
    }

    private func scheduleSweep() {
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.sweepInterval) { [weak self] in
            guard let self, self.running.load(ordering: .acquiring) else { return }
            self.sweep(now: DispatchTime.now().uptimeNanoseconds)
            self.scheduleSweep()
        }
    }

    /// MHD accepted `connection` on `descriptor`.
    func opened(_ connection: UInt, descriptor: Int32, now: UInt64) {
        entries.withLock { $0[connection] = Entry(descriptor: descriptor, headSince: now) }
    }

    /// The head of the connection's current request is complete; `exchange` reads its body.
    func headComplete(_ connection: UInt, exchange: HTTPExchange) {
        entries.withLock { entries in
            // One hash lookup: this runs for every request.
            guard let index = entries.index(forKey: connection) else { return }
            entries.values[index].headSince = nil
            entries.values[index].body = BodyWatch(exchange: exchange)
        }
    }

    /// A request on the connection ended; the next head (or idleness) begins now.
    func requestEnded(_ connection: UInt, now: UInt64) {
        entries.withLock { entries in
            guard let index = entries.index(forKey: connection) else { return }
            entries.values[index].headSince = now
            entries.values[index].body = nil
        }
    }

    /// MHD is closing the connection (its socket is still open).
    func closed(_ connection: UInt) {
        _ = entries.withLock { $0.removeValue(forKey: connection) }
    }

    /// Shuts down every connection whose head phase began more than the limit before `now`, and
    /// every one whose body can no longer complete (seen so on two sweeps in a row).
    /// - Returns: How many were cut by this call.
    @discardableResult
    func sweep(now: UInt64) -> Int {
        let limit = limitNanoseconds
        return entries.withLock { entries in
            var cut = 0
            for (connection, entry) in entries {
                if limit > 0, let since = entry.headSince, now > since, now - since > limit {
                    // Counted before the socket goes down: whoever sees the cut (the client) must
                    // also see it counted.
                    headCuts.add(1, ordering: .releasing)
                    cmhd_shutdown_socket(entry.descriptor)
                    // Once is enough: MHD closes it soon; do not count it twice meanwhile.
                    entries[connection]?.headSince = nil
                    cut += 1
                    continue
                }
                guard let watch = entry.body else { continue }
                if let received = watch.exchange.bytesIfAnsweredWhileReading {
                    // Answered (a deadline) while the body still arrives, and no byte came since
                    // the previous sweep, which would have carried the answer out: write it now.
                    guard watch.stalledAt == received else {
                        entries[connection]?.body?.stalledAt = received
                        continue
                    }
                    if let answer = watch.exchange.takeAnswerWhileReading() {
                        if !EarlyResponse.write(answer, to: entry.descriptor) {
                            HTTPExchange.dispose(answer)
                            cmhd_shutdown_socket(entry.descriptor)
                        }
                    }
                    entries[connection]?.body = nil
                    continue
                }
                guard let received = watch.exchange.bytesIfReadingUnheld,
                    cmhd_peer_finished(entry.descriptor) == 1
                else {
                    entries[connection]?.body?.stalledAt = nil
                    continue
                }
                guard watch.stalledAt == received else {
                    entries[connection]?.body?.stalledAt = received
                    continue
                }
                bodyCuts.add(1, ordering: .releasing)
                cmhd_shutdown_socket(entry.descriptor)
                entries[connection]?.body = nil
                cut += 1
            }
            return cut
        }
    }
}
