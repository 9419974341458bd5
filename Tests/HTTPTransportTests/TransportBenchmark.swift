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

    /// Prints min / median / max MiB/s of `runs` and their mean process CPU (client and server).
    static func report(_ label: String, bytes: Int, runs: [(seconds: Double, cpu: Double)]) {
        let rates = runs.map { Double(bytes) / Double(1 << 20) / $0.seconds }.sorted()
        let cpu = runs.map(\.cpu).reduce(0, +) / Double(runs.count)
        print(String(
            format: "BENCH %@: %d runs, MiB/s min %.0f median %.0f max %.0f; process CPU %.3f s per run",
            label, runs.count, rates.first ?? 0, rates[rates.count / 2], rates.last ?? 0, cpu
        ))
    }

    /// Times `body` `count` times.
    static func measure(_ count: Int, _ body: () async throws -> Void) async rethrows -> [(seconds: Double, cpu: Double)] {
        var runs: [(seconds: Double, cpu: Double)] = []
        for _ in 0..<count {
            let cpu = ProcessCPUTime.seconds() ?? 0, start = ContinuousClock.now
            try await body()
            runs.append((secondsSince(start), (ProcessCPUTime.seconds() ?? 0) - cpu))
        }
        return runs
    }

    @Test func upload64MiB() async throws {
        let size = 64 << 20
        let payload = [UInt8](repeating: 0x5A, count: size)
        let file = try TemporaryFile(bytes: payload)
        defer { file.remove() }
        let transport = try CurlTransport()
        var router = Self.sinkRouter()
        router.get("/slow") { _, _ in
            try await Task.sleep(for: .seconds(2))
            return Response()
        }
        try await withServer(router) { port in
            let idle = try await Self.measure(1) {
                _ = try await transport.send(TransportRequest(method: "GET", url: "http://127.0.0.1:\(port)/slow"))
            }
            print(String(format: "BENCH waiting %.2f s for a slow response: process CPU %.3f s", idle[0].seconds, idle[0].cpu))
            let url = "http://127.0.0.1:\(port)/sink"
            let bodies = [("64 MiB from memory", TransportBody.bytes(payload)), ("64 MiB from file", .file(path: file.path, offset: 0, length: Int64(size)))]
            for (label, body) in bodies {
                let runs = try await Self.measure(9) {
                    let response = try await transport.send(TransportRequest(method: "PUT", url: url, body: body))
                    #expect(response.text == String(size))
                }
                Self.report(label, bytes: size, runs: runs)
            }
            // The client's shape: 4 MiB chunks from the file, 4 in flight.
            let runs = try await Self.measure(9) {
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
            }
            Self.report("16 x 4 MiB chunks from file, 4 parallel", bytes: size, runs: runs)
        }
    }
}
