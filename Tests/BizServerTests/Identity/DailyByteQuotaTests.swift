@testable import BizServer
import Testing

/// `maxBytesPerUserPerDay`: the pure sum over the last 24 hours.
@Suite("Daily byte quota")
struct DailyByteQuotaTests {
    static let day = DailyByteQuota.window
    static let now: Int64 = 2_000_000_000_000
    static let quota = DailyByteQuota(limit: 100)

    static func at(_ agoSeconds: Int64, _ size: Int64) -> UploadSize {
        UploadSize(receivedAt: now - agoSeconds * 1000, fsize: size)
    }

    @Test func whatIsLeftBoundsTheToken() {
        #expect(Self.quota.decide(recorded: [], declared: nil, now: Self.now) == .allowed(remaining: 100))
        let recorded = [Self.at(3600, 30), Self.at(60, 50)]
        #expect(Self.quota.decide(recorded: recorded, declared: nil, now: Self.now) == .allowed(remaining: 20))
        #expect(Self.quota.decide(recorded: recorded, declared: 20, now: Self.now) == .allowed(remaining: 20))
        // Uploads older than 24 h do not count; exactly 24 h old is out.
        let old = [Self.at(86_400, 90), Self.at(86_401, 90)]
        #expect(Self.quota.decide(recorded: old, declared: nil, now: Self.now) == .allowed(remaining: 100))
    }

    @Test func retryAfterIsWhenEnoughOfTheOldestLeaveTheWindow() {
        let recorded = [Self.at(80_000, 30), Self.at(70_000, 50), Self.at(60, 20)]  // 100 used
        // Nothing left: once the 30 bytes from 80000 s ago leave, in 6400 s.
        #expect(Self.quota.decide(recorded: recorded, declared: nil, now: Self.now) == .exhausted(retryAfter: 6400))
        // 40 bytes need both old ones gone: in 16400 s.
        #expect(Self.quota.decide(recorded: recorded, declared: 40, now: Self.now) == .exhausted(retryAfter: 16_400))
        #expect(Self.quota.decide(recorded: recorded, declared: 101, now: Self.now) == .tooLarge)
        let partial = [UploadSize(receivedAt: Self.now - Self.day + 1, fsize: 100)]
        #expect(Self.quota.decide(recorded: partial, declared: nil, now: Self.now) == .exhausted(retryAfter: 1))
    }
}
