import Foundation
import HTTPKit
import HTTPTransport
import Testing

/// Throughput figures for the branch report, not a test: skipped unless `UPGATE_BENCH` is set.
/// Run with `scripts/bench/transport` (release build).
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["UPGATE_BENCH"] != nil))
struct TransportBenchmark {
    static func sinkRouter() -> Router {
        var router = Router()
        router.put("/sink", body: .stream(maxBytes: 1 << 30)) { request, _ in
            var total = 0
            for try await piece in request.bodyStream { total += piece.count }
            return Response(body: Array("\(total)".utf8))
        }
        return router
    }

    static func report(_ label: String, bytes: Int, seconds: Double, cpu: Double) {
        let mib = Double(bytes) / Double(1 << 20)
        print(String(format: "BENCH %@: %.0f MiB in %.3f s = %.0f MiB/s, process CPU %.2f s", label, mib, seconds, mib / seconds, cpu))
    }

    @Test func upload64MiB() async throws {
        let size = 64 << 20
        let payload = [UInt8](repeating: 0x5A, count: size)
        let file = try TemporaryFile(bytes: payload)
        defer { file.remove() }
        let transport = try CurlTransport()
        try await withServer(Self.sinkRouter()) { port in
            let url = "http://127.0.0.1:\(port)/sink"
            for (label, body) in [("64 MiB from memory", TransportBody.bytes(payload)), ("64 MiB from file", .file(path: file.path, offset: 0, length: Int64(size)))] {
                for _ in 0..<3 {
                    let cpu = ProcessCPUTime.seconds() ?? 0, start = ContinuousClock.now
                    let response = try await transport.send(TransportRequest(method: "PUT", url: url, body: body))
                    #expect(response.text == String(size))
                    Self.report(label, bytes: size, seconds: secondsSince(start), cpu: (ProcessCPUTime.seconds() ?? 0) - cpu)
                }
            }
            // The client's shape: 4 MiB chunks from the file, 4 in flight.
            let cpu = ProcessCPUTime.seconds() ?? 0, start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<4 {
                    group.addTask {
                        for chunk in stride(from: lane, to: 16, by: 4) {
                            let response = try await transport.send(TransportRequest(
                                method: "PUT", url: url, body: .file(path: file.path, offset: Int64(chunk << 22), length: 4 << 20)
                            ))
                            #expect(response.text == String(4 << 20))
                        }
                    }
                }
                try await group.waitForAll()
            }
            Self.report("16 x 4 MiB chunks from file, 4 parallel", bytes: size, seconds: secondsSince(start), cpu: (ProcessCPUTime.seconds() ?? 0) - cpu)
        }
    }
}
