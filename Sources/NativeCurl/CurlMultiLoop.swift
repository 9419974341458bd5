internal import CCurl
internal import Foundation
import Synchronization

/// The thread that drives one `CURLM *`: adds submitted transfers, removes cancelled ones, runs
/// `curl_multi_perform`, completes finished transfers, and sleeps in `curl_multi_poll` until a
/// socket is ready, a libcurl timer fires, or `curl_multi_wakeup` is called.
///
/// A multi handle is not thread-safe except for `curl_multi_wakeup`, so everything else happens
/// on this thread; other threads talk to it through the `inbox` and a wakeup. The wakeup is
/// issued under the inbox lock, and the thread marks the inbox closed under the same lock before
/// `curl_multi_cleanup`, so no wakeup can reach a freed handle. `@safe`: the `CURLM *` is
/// created and freed here and never handed out.
@safe final class CurlMultiLoop: @unchecked Sendable {
    private struct Inbox {
        var submitted: [CurlTransfer] = []
        var cancelled: [UInt64] = []
        var resumed: [UInt64] = []
        var stopping = false
        var closed = false
    }

    /// Longest sleep with nothing to do: waking once a second when idle costs nothing measurable
    /// and bounds the damage of a missed wakeup.
    private static let idlePollMilliseconds: Int32 = 1000

    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex(Inbox())
    /// Transfers added to the multi handle, by id. Touched only on the loop thread; holding them
    /// here is what keeps the unretained callback context pointers valid.
    private var active: [UInt64: CurlTransfer] = [:]
    private let opened = Atomic<Int>(0)

    init(options: CurlMulti.Options) throws(CurlError) {
        try CurlGlobal.ensureInitialized()
        guard let multi = unsafe curl_multi_init() else {
            throw CurlError(code: .outOfMemory, message: "curl_multi_init failed")
        }
        unsafe self.multi = multi
        _ = unsafe ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, max(0, options.maxConnectionsPerHost))
        _ = unsafe ccurl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, max(0, options.maxTotalConnections))
        _ = unsafe ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(1, options.maxIdleConnections))
    }

    /// Starts the loop thread; it keeps `self` alive until it has cleaned up.
    func start() {
        let thread = Thread { self.run() }
        thread.name = "curl-multi"
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Connections opened so far by completed transfers.
    var connectionsOpened: Int { opened.load(ordering: .relaxed) }

    /// Hands `transfer` to the loop; completes it at once if the loop is stopping.
    func submit(_ transfer: CurlTransfer) {
        let accepted = inbox.withLock { inbox in
            guard !inbox.stopping else { return false }
            inbox.submitted.append(transfer)
            _ = unsafe curl_multi_wakeup(multi)
            return true
        }
        if !accepted { transfer.finish(failure: CurlError(code: .abortedByCallback, message: "transport closed")) }
    }

    /// Asks the loop to remove the transfer with `id` (a no-op if it already finished).
    func cancel(_ id: UInt64) {
        inbox.withLock { inbox in
            guard !inbox.closed else { return }
            inbox.cancelled.append(id)
            _ = unsafe curl_multi_wakeup(multi)
        }
    }

    /// Asks the loop to unpause the transfer with `id` (a streamed body has bytes again, or its
    /// reader has room again); a no-op if it already finished. `curl_easy_pause` must run on the
    /// thread that drives the multi handle, hence the message.
    func resume(_ id: UInt64) {
        inbox.withLock { inbox in
            guard !inbox.closed else { return }
            inbox.resumed.append(id)
            _ = unsafe curl_multi_wakeup(multi)
        }
    }

    /// Fails every transfer still running with "transport closed" and ends the thread.
    func stop() {
        inbox.withLock { inbox in
            inbox.stopping = true
            if !inbox.closed { _ = unsafe curl_multi_wakeup(multi) }
        }
    }

    private func run() {
        var running: Int32 = 0
        while true {
            let (submitted, cancelled, resumed, stopping) = inbox.withLock { inbox in
                defer {
                    inbox.submitted = []
                    inbox.cancelled = []
                    inbox.resumed = []
                }
                return (inbox.submitted, inbox.cancelled, inbox.resumed, inbox.stopping)
            }
            for transfer in submitted { add(transfer) }
            for id in cancelled {
                guard let transfer = active[id] else { continue }
                remove(transfer)
                transfer.finish(failure: CurlError(code: .abortedByCallback, message: "transfer cancelled"))
            }
            for id in resumed {
                // CURLPAUSE_CONT: both directions; a direction with nothing to do pauses again.
                guard let transfer = active[id] else { continue }
                _ = unsafe curl_easy_pause(transfer.easy, CURLPAUSE_RECV_CONT | CURLPAUSE_SEND_CONT)
            }
            if stopping { break }
            _ = unsafe curl_multi_perform(multi, &running)
            completeFinished()
            _ = unsafe curl_multi_poll(multi, nil, 0, Self.idlePollMilliseconds, nil)
        }
        for transfer in active.values {
            remove(transfer)
            transfer.finish(failure: CurlError(code: .abortedByCallback, message: "transport closed"))
        }
        inbox.withLock { $0.closed = true }
        unsafe curl_multi_cleanup(multi)
    }

    private func add(_ transfer: CurlTransfer) {
        guard !transfer.isCancelled else {
            return transfer.finish(failure: CurlError(code: .abortedByCallback, message: "transfer cancelled"))
        }
        let code = unsafe curl_multi_add_handle(multi, transfer.easy)
        guard code == CURLM_OK else {
            let message = unsafe String(cString: curl_multi_strerror(code))
            return transfer.finish(failure: CurlError(code: .badFunctionArgument, message: message))
        }
        active[transfer.id] = transfer
    }

    private func remove(_ transfer: CurlTransfer) {
        _ = unsafe curl_multi_remove_handle(multi, transfer.easy)
        active[transfer.id] = nil
    }

    private func completeFinished() {
        var queued: Int32 = 0
        while let message = unsafe curl_multi_info_read(multi, &queued) {
            var result = CURLE_OK
            guard let easy = unsafe ccurl_message_done(message, &result) else { continue }
            var context: UnsafeMutableRawPointer?
            _ = unsafe ccurl_easy_getinfo_private(easy, &context)
            guard let context = unsafe context else { continue }
            let transfer = unsafe Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
            remove(transfer)
            opened.add(transfer.connectionsOpened, ordering: .relaxed)
            transfer.finish(code: result)
        }
    }
}
