import Foundation
import HTTPKit
import HTTPTransport
import Testing

/// Concurrency and cancellation (both transports), connection reuse and idle cost (``CurlTransport``).
@Suite(.serialized) struct CurlTransportConcurrencyTests {
    static func router() -> Router {
        var router = Router()
        router.get("/n/:n") { request, _ in Response(body: Array((request.parameters["n"] ?? "").utf8)) }
        router.get("/slow/:ms") { request, _ in
            let milliseconds = Int(request.parameters["ms"] ?? "") ?? 0
            try await Task.sleep(for: .milliseconds(milliseconds))
            return Response(body: Array("done".utf8))
        }
        return router
    }

    @Test(arguments: TransportUnderTest.allCases)
    func twoHundredConcurrentRequestsAllComplete(_ kind: TransportUnderTest) async throws {
        let transport: any HTTPTransport = switch kind {
        case .curl: try CurlTransport(configuration: .init(maxConnectionsPerHost: 8))
        case .urlSession: URLSessionTransport(configuration: .init(maxConnectionsPerHost: 8))
        }
        try await withServer(Self.router()) { port in
            let bodies = try await withThrowingTaskGroup(of: (Int, String, Int).self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let response = try await transport.send(TransportRequest(
                            method: "GET", url: "http://127.0.0.1:\(port)/n/\(index)", timeout: .seconds(20)
                        ))
                        return (index, response.text, response.status)
                    }
                }
                var all: [(Int, String, Int)] = []
                for try await result in group { all.append(result) }
                return all
            }
            #expect(bodies.count == 200)
            #expect(bodies.allSatisfy { $0.1 == String($0.0) && $0.2 == 200 })
        }
        // Client-side count (the server does not expose remote ports): at most the per-host limit.
        // URLSession does not tell how many connections it opened.
        if let curl = transport as? CurlTransport { #expect(curl.connectionsOpened <= 8) }
    }

    @Test func sequentialRequestsReuseOneConnection() async throws {
        let transport = try CurlTransport()
        try await withServer(Self.router()) { port in
            for index in 0..<50 {
                let response = try await transport.send(TransportRequest(method: "GET", url: "http://127.0.0.1:\(port)/n/\(index)"))
                #expect(response.text == String(index))
            }
        }
        #expect(transport.connectionsOpened == 1)
    }

    @Test(arguments: TransportUnderTest.allCases)
    func cancellingTheTaskCancelsTheTransferPromptly(_ kind: TransportUnderTest) async throws {
        let transport = try kind.make()
        try await withServer(Self.router()) { port in
            let task = Task {
                try await transport.send(TransportRequest(method: "GET", url: "http://127.0.0.1:\(port)/slow/3000"))
            }
            try await Task.sleep(for: .milliseconds(200))
            let start = ContinuousClock.now
            task.cancel()
            let error = await transportError { _ = try await task.value }
            #expect(error?.kind == .cancelled)
            #expect(secondsSince(start) < 0.3)
            // The transport is still usable afterwards.
            let next = try await transport.send(TransportRequest(method: "GET", url: "http://127.0.0.1:\(port)/n/7"))
            #expect(next.text == "7")
        }
    }

    @Test(arguments: TransportUnderTest.allCases)
    func alreadyCancelledTaskSendsNothing(_ kind: TransportUnderTest) async throws {
        let transport = try kind.make()
        let served = Locked(0)
        var router = Router()
        router.get("/count") { _, _ in
            served.update { $0 += 1 }
            return Response()
        }
        try await withServer(router) { port in
            let task = Task {
                // Cancelled during this sleep, so the send below starts already cancelled.
                try? await Task.sleep(for: .seconds(5))
                return try await transport.send(TransportRequest(method: "GET", url: "http://127.0.0.1:\(port)/count"))
            }
            task.cancel()
            let error = await transportError { _ = try await task.value }
            #expect(error?.kind == .cancelled)
        }
        #expect(served.value == 0)
    }

    @Test func waitingForASlowResponseBurnsNoCPU() async throws {
        let transport = try CurlTransport()
        try await withServer(Self.router()) { port in
            _ = try await transport.send(TransportRequest(method: "GET", url: "http://127.0.0.1:\(port)/n/0"))
            let before = try #require(ProcessCPUTime.seconds())
            let response = try await transport.send(TransportRequest(method: "GET", url: "http://127.0.0.1:\(port)/slow/2000"))
            let after = try #require(ProcessCPUTime.seconds())
            #expect(response.text == "done")
            #expect(after - before < 0.2, "CPU while waiting 2 s: \(after - before) s")
        }
    }
}
