import Synchronization

/// ``UploadClient/Configuration/maxBytesPerSecond``: one schedule for every request body of an
/// upload, so the upload as a whole averages at most the rate whatever its protocol (a form
/// upload is one request) and however many requests are in flight.
///
/// Each body reserves the next free slot of `bytes / rate` seconds and starts when its slot does;
/// the transport then sends it at the rate (``HTTPTransport/TransportRequest/maxSendBytesPerSecond``),
/// so the bytes flow evenly through the slot instead of in a burst at its start (and progress
/// moves byte by byte). Bodies in parallel queue behind each other, so the total stays at the rate.
final class UploadPacer: Sendable {
    /// The rate, bytes per second (≥ 1).
    let bytesPerSecond: Int64
    private let clock = ContinuousClock()
    private let nextFree = Mutex<ContinuousClock.Instant?>(nil)

    init(bytesPerSecond: Int64) {
        self.bytesPerSecond = max(1, bytesPerSecond)
    }

    /// How long `bytes` take to send at the rate.
    func duration(of bytes: Int64) -> Duration {
        .nanoseconds(Int64((Double(bytes) / Double(bytesPerSecond) * 1e9).rounded(.up)))
    }

    /// Waits until a body of `bytes` may start. Throws when the task is cancelled while waiting.
    func admit(_ bytes: Int64) async throws {
        guard bytes > 0 else { return }
        let now = clock.now
        let cost = duration(of: bytes)
        let start = nextFree.withLock { next -> ContinuousClock.Instant in
            let start = max(now, next ?? now)
            next = start + cost
            return start
        }
        if start > now { try await Task.sleep(until: start, clock: clock) }
    }
}
