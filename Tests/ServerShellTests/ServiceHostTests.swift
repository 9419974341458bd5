import Basics
import Foundation
import HTTPKit
import ServerShell
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The host's one stop order, whoever asks for the stop: stop accepting, let the request in
/// flight finish, then stop the background tasks (last started, first stopped).
@Suite("ServiceHost", .serialized)
struct ServiceHostTests {
    final class Events: Sendable {
        private let list = Mutex<[String]>([])
        func add(_ event: String) { list.withLock { $0.append(event) } }
        var all: [String] { list.withLock { $0 } }
    }

    /// A host whose `/slow` request takes 300 ms and whose two tasks record their starts and stops.
    static func host(_ events: Events, logs: LogSink) -> ServiceHost {
        var router = Router()
        router.get("/slow") { _, _ in
            events.add("request started")
            try await Task.sleep(for: .milliseconds(300))
            events.add("request finished")
            return Response(body: Array("done".utf8))
        }
        let tasks = ["first", "second"].map { name in
            ServiceHost.BackgroundTask(
                name: name, start: { events.add("start \(name)") },
                stop: {
                    try? await Task.sleep(for: .milliseconds(20))
                    events.add("stop \(name)")
                })
        }
        return ServiceHost(
            name: "test-server", http: .init(threadCount: 2, shutdownGracePeriod: .seconds(5)), router: router,
            logger: Logger(label: "test-server", sink: logs), tasks: tasks, announce: { [("extra", "yes")] })
    }

    static let stopOrder = [
        "start first", "start second", "request started", "request finished", "stop second", "stop first",
    ]

    /// Starts a slow request, waits until it runs, stops with `stop`, and returns its reply.
    static func stopDuringASlowRequest(
        _ events: Events, port: Int, stop: @escaping @Sendable () async -> Void
    ) async throws -> TestHTTPResponse {
        async let reply = BlockingIO.run { try TestHTTPClient.request(port: port, "GET", "/slow") }
        for _ in 0..<500 where !events.all.contains("request started") { try await Task.sleep(for: .milliseconds(5)) }
        await stop()
        return try await reply
    }

    @Test func shutdownDrainsTheRequestThenStopsTheTasksInReverse() async throws {
        let events = Events()
        let logs = LogSink.memory()
        let host = Self.host(events, logs: logs)
        let port = try host.start()
        #expect(host.boundPort.value == port)
        let reply = try await Self.stopDuringASlowRequest(events, port: port) { await host.shutdown() }
        #expect(reply.text == "done")
        #expect(events.all == Self.stopOrder)
        let listening = try #require(logs.capturedLines.first { $0.contains(#""msg":"listening""#) })
        #expect(listening.contains(#""port":\#(port)"#) && listening.contains(#""extra":"yes""#))
        #expect(logs.capturedLines.filter { $0.contains(#""msg":"stopped""#) }.count == 1)
        await host.shutdown()
        #expect(logs.capturedLines.filter { $0.contains(#""msg":"stopped""#) }.count == 1, "idempotent")
    }

    @Test func sigtermDuringRunStopsInTheSameOrderAndSighupCallsTheReload() async throws {
        let events = Events()
        let logs = LogSink.memory()
        let host = Self.host(events, logs: logs)
        let reloads = Mutex(0)
        let running = Task { try await host.run { reloads.withLock { $0 += 1 } } }
        for _ in 0..<500 where !host.isRunning { try await Task.sleep(for: .milliseconds(5)) }
        let port = try #require(host.boundPort.value)
        kill(getpid(), SIGHUP)
        for _ in 0..<500 where reloads.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(reloads.withLock { $0 } == 1)
        #expect(host.isRunning, "a hang-up does not stop the host")
        let reply = try await Self.stopDuringASlowRequest(events, port: port) { kill(getpid(), SIGTERM) }
        try await running.value
        #expect(reply.text == "done")
        #expect(events.all == Self.stopOrder)
        #expect(logs.capturedLines.contains { $0.contains(#""msg":"signal received, shutting down""#) && $0.contains("SIGTERM") })
    }

    @Test func aPortInUseIsAStartErrorInWords() async throws {
        let events = Events()
        let first = Self.host(events, logs: LogSink.memory())
        let port = try first.start()
        defer { Task { await first.shutdown() } }
        let second = ServiceHost(
            name: "other", http: .init(port: port), router: Router(), logger: Logger(label: "o", sink: LogSink.memory()))
        #expect(throws: HTTPServer.StartError(host: "127.0.0.1", port: port, reason: "address already in use")) {
            try second.start()
        }
        #expect(!second.isRunning)
    }
}
