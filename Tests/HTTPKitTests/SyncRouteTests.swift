import Basics
import Foundation
import HTTPKit
import Testing
import TestSupport

/// Routes registered with `addSync`: handler inline on the worker thread, same semantics as
/// async routes otherwise.
@Suite struct SyncRouteTests {
    struct Failure: HTTPResponseError {
        var httpStatus: Int { 422 }
        var clientMessage: String { "no good" }
        var responseHeaders: HTTPHeaders { ["X-Why": "because"] }
    }

    struct Unexpected: Error {}

    static func router(calls: Locked<Int>) -> Router {
        var router = Router()
        router.postSync("/echo", maxBodyBytes: 1024) { request, context in
            calls.update { $0 += 1 }
            context.addLogFields(["event": "echoed", "size": .int(Int64(request.body.count)), "status": 999])
            return Response(body: Array("\(request.method.rawValue) \(request.path) \(context.route) ".utf8) + request.body)
        }
        router.getSync("/fail/:kind") { request, context in
            context.addLogFields(["reason": .string(request.parameters["kind"] ?? "")])
            if request.parameters["kind"] == "known" { throw Failure() }
            throw Unexpected()
        }
        return router
    }

    @Test func roundTripOverTheWireOnOneConnection() async throws {
        let calls = Locked(0)
        try await withServer(Self.router(calls: calls)) { port, _, _ in
            try await BlockingIO.run {
                let client = try TestHTTPClient(port: port)
                defer { client.close() }
                for index in 0..<3 {  // keep-alive: the connection is never parked
                    let response = try client.request("POST", "/echo", headers: [("X-Reqid", "sync-\(index)")],
                                                      body: Array("body \(index)".utf8))
                    #expect(response.status == 200)
                    #expect(response.text == "POST /echo /echo body \(index)")
                    #expect(response.headers["X-Reqid"] == "sync-\(index)")
                    #expect(response.headers["Content-Type"] == "application/json")
                }
            }
            let chunked = try await fetch(port, "POST", "/echo", body: [UInt8](repeating: 65, count: 900), chunked: true)
            #expect(chunked.status == 200 && chunked.body.count == "POST /echo /echo ".utf8.count + 900)
            let empty = try await fetch(port, "POST", "/echo")
            #expect(empty.status == 200 && empty.text == "POST /echo /echo ")
        }
        #expect(calls.value == 5)
    }

    @Test func thrownErrorsAreRenderedAsForAsyncRoutes() async throws {
        try await withServer(Self.router(calls: Locked(0))) { port, _, logs in
            let known = try await fetch(port, "GET", "/fail/known")
            #expect(known.status == 422 && known.text == #"{"error":"no good"}"#)
            #expect(known.headers["X-Why"] == "because" && known.headers["X-Reqid"] != nil)
            let unknown = try await fetch(port, "GET", "/fail/other")
            #expect(unknown.status == 500 && unknown.text == #"{"error":"internal error"}"#)
            #expect(logs.capturedLines.contains { $0.contains("handler failed") && $0.contains("Unexpected") })
        }
    }

    @Test func bodyOverTheLimitIs413WithoutCallingTheHandler() async throws {
        let calls = Locked(0)
        try await withServer(Self.router(calls: calls)) { port, _, _ in
            let announced = try await fetch(port, "POST", "/echo", body: [UInt8](repeating: 1, count: 4096))
            #expect(announced.status == 413 && announced.text == #"{"error":"request body exceeds 1024 bytes"}"#)
            let chunked = try await fetch(port, "POST", "/echo", body: [UInt8](repeating: 2, count: 8192), chunked: true)
            #expect(chunked.status == 413)
            let fits = try await fetch(port, "POST", "/echo", body: [UInt8](repeating: 3, count: 1024), chunked: true)
            #expect(fits.status == 200)
        }
        #expect(calls.value == 1)
    }

    @Test func wrongMethodAndUnknownPathAsForAsyncRoutes() async throws {
        try await withServer(Self.router(calls: Locked(0))) { port, _, _ in
            let wrong = try await fetch(port, "GET", "/echo")
            #expect(wrong.status == 405 && wrong.headers["Allow"] == "POST")
            #expect(try await fetch(port, "GET", "/nowhere").status == 404)
        }
    }

    @Test func oneAccessLogLineCarriesTheHandlersFieldsAndTheObserverSeesIt() async throws {
        let events = Locked<[ResponseEvent]>([])
        let router = Self.router(calls: Locked(0))
        try await withServer(router, observer: { event in events.update { $0.append(event) } }) { port, _, logs in
            _ = try await fetch(port, "POST", "/echo?token=SECRET", headers: [("X-Reqid", "sync-log")], body: [1, 2])
            _ = try await fetch(port, "GET", "/fail/known")
            let lines = logs.capturedLines.filter { $0.contains("\"msg\":\"request\"") }
            try #require(lines.count == 2)
            #expect(logs.capturedLines.count(where: { $0.contains("sync-log") }) == 1)
            let echo = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
            #expect(echo["path"] as? String == "/echo" && echo["reqid"] as? String == "sync-log")
            #expect(echo["event"] as? String == "echoed" && echo["size"] as? Int == 2)
            #expect(echo["status"] as? Int == 200, "a handler field cannot replace the line's own")
            #expect(!lines[0].contains("SECRET"))
            let failed = try #require(try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
            #expect(failed["status"] as? Int == 422 && failed["reason"] as? String == "known")
        }
        #expect(events.value.map(\.route) == ["/echo", "/fail/:kind"])
        #expect(events.value.map(\.status) == [200, 422])
    }

    @Test func inProcessRoutingRunsSyncHandlersAndLogsTheSameLine() async throws {
        let logs = LogSink.memory()
        let router = Self.router(calls: Locked(0))
        let logger = Logger(label: "t", sink: logs)
        let response = await router.respond(to: Request(method: .post, target: "/echo", body: [7]), logger: logger)
        #expect(response.status == 200 && response.bodyBytes.last == 7)
        let tooLarge = await router.respond(
            to: Request(method: .post, target: "/echo", body: [UInt8](repeating: 0, count: 2000)), logger: logger)
        #expect(tooLarge.status == 413)
        #expect(logs.capturedLines.count == 2)
        #expect(logs.capturedLines[0].contains(#""event":"echoed""#))
    }
}
