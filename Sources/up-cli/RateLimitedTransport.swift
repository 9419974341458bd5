import HTTPTransport
import Synchronization

/// `--limit-rate`: an ``HTTPTransport`` that paces request bodies so that the bytes handed to the
/// wrapped transport average at most `bytesPerSecond`. Each request reserves its body's share of
/// the budget and waits (cancellably, so a pause stays prompt) until its slot starts; requests in
/// parallel queue behind each other.
final class RateLimitedTransport: HTTPTransport {
    let base: any HTTPTransport
    let bytesPerSecond: Int64
    private let nextFree = Mutex<ContinuousClock.Instant?>(nil)

    init(base: any HTTPTransport, bytesPerSecond: Int64) {
        self.base = base
        self.bytesPerSecond = max(1, bytesPerSecond)
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let length = request.body.count
        if length > 0 {
            let clock = ContinuousClock()
            let now = clock.now
            let cost = Duration.nanoseconds(Int64(Double(length) / Double(bytesPerSecond) * 1e9))
            let start = nextFree.withLock { next -> ContinuousClock.Instant in
                let start = max(now, next ?? now)
                next = start + cost
                return start
            }
            if start > now {
                do {
                    try await Task.sleep(until: start, clock: clock)
                } catch {
                    throw TransportError(.cancelled, "cancelled while waiting for --limit-rate")
                }
            }
        }
        return try await base.send(request)
    }
}
