import Foundation
import HTTPKit
import HTTPTransport
import TestSupport
import Testing

/// ``TransportRequest/maxSendBytesPerSecond``: the body goes out evenly at the rate (up-cli's
/// `--limit-rate`), not in one burst; the bytes arrive intact.
@Suite struct CurlTransportPacingTests {
    @Test func aPacedBodyTakesItsTimeAndMovesEvenly() async throws {
        let payload = (0..<(768 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let sent = Locked<[(ContinuousClock.Instant, Int64)]>([])
        let transport = try CurlTransport()
        let started = ContinuousClock.now
        try await withServer(CurlTransportUploadTests.hashingRouter()) { port in
            let response = try await transport.send(TransportRequest(
                method: "PUT", url: "http://127.0.0.1:\(port)/upload", body: .bytes(payload),
                maxSendBytesPerSecond: 256 << 10,
                progress: { bytes in sent.update { $0.append((ContinuousClock.now, bytes)) } }
            ))
            #expect(response.text == "\(payload.count) \(checksum(payload))")
        }
        let elapsed = ContinuousClock.now - started
        // 768 KiB at 256 KiB/s is 3 s; libcurl may run a little ahead at the start, never all of it.
        #expect(elapsed >= .seconds(2), "took \(elapsed)")
        // Halfway through the time, roughly half the bytes are out (a burst would show all of them).
        let reports = sent.value
        let middle = started + elapsed / 2
        let byMiddle = reports.last { $0.0 <= middle }?.1 ?? 0
        #expect(byMiddle < Int64(payload.count) * 3 / 4, "\(byMiddle) of \(payload.count) bytes sent by half time")
    }
}
