import Basics
import Dispatch
import Foundation
import HTTPKit
import Testing
import TestSupport

/// Routes registered with `addDeferred`: the handler starts on the worker thread and answers
/// through its `Responder`, at once or later from another thread, with no task.
@Suite struct DeferredRouteTests {
    struct Refused: HTTPResponseError {
        var httpStatus: Int { 429 }
        var clientMessage: String { "slow down" }
    }

    static func router(handled: Locked<Int>) -> Router {
        var router = Router()
        // Answers 50 ms later from a thread of its own, as a batched statement's completion does.
        router.addDeferred(.post, "/later", maxBodyBytes: 1024) { request, context, responder in
            handled.update { $0 += 1 }
            context.addLogFields(["event": "deferred", "size": .int(Int64(request.body.count))])
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
                responder.answer { Response(body: Array("later ".utf8) + request.body) }
            }
        }
        router.addDeferred(.get, "/refused/:when") { request, _, responder in
            if request.parameters["when"] == "at-once" { throw Refused() }
            DispatchQueue.global().async { responder.answer { throw Refused() } }
        }
        router.addDeferred(.get, "/never", timeout: .milliseconds(200)) { _, _, responder in
            // Answers only long after the deadline: that answer must be dropped quietly.
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(600)) {
                responder.answer { Response(body: Array("too late".utf8)) }
                responder.answer { Response(body: Array("twice".utf8)) }
            }
        }
        return router
    }

    @Test func anAnswerGivenLaterFromAnotherThreadIsSentAndLogged() async throws {
        let handled = Locked(0)
        try await withServer(Self.router(handled: handled)) { port, _, logs in
            try await BlockingIO.run {
                let client = try TestHTTPClient(port: port)
                defer { client.close() }
                for index in 0..<3 {  // keep-alive: the connection is parked and resumed each time
                    let response = try client.request("POST", "/later", body: Array("body \(index)".utf8))
                    #expect(response.status == 200 && response.text == "later body \(index)")
                    #expect(response.headers["X-Reqid"] != nil)
                }
            }
            let line = logs.capturedLines.first { $0.contains(#""path":"/later""#) }
            #expect(line?.contains(#""event":"deferred","size":6"#) == true, "\(logs.capturedLines)")
        }
        #expect(handled.value == 3)
    }

    @Test(arguments: ["at-once", "later"])
    func anErrorThrownAtOnceOrAnsweredLaterIsRendered(when: String) async throws {
        try await withServer(Self.router(handled: Locked(0))) { port, _, _ in
            let response = try await fetch(port, "GET", "/refused/\(when)")
            #expect(response.status == 429 && response.text == #"{"error":"slow down"}"#)
        }
    }

    @Test func noAnswerByTheDeadlineIs503AndALateOneIsDropped() async throws {
        try await withServer(Self.router(handled: Locked(0))) { port, _, _ in
            let started = ContinuousClock.now
            let response = try await fetch(port, "GET", "/never")
            #expect(response.status == 503 && response.text == #"{"error":"handler timed out"}"#)
            #expect(ContinuousClock.now - started < .seconds(2))
            try await Task.sleep(for: .milliseconds(700))  // the late answers arrive, and are dropped
            #expect(try await fetch(port, "POST", "/later", body: Array("x".utf8)).text == "later x")
        }
    }

    @Test func inProcessTheAnswerIsAwaited() async throws {
        let router = Self.router(handled: Locked(0))
        let logger = Logger(label: "test", sink: .memory())
        let later = await router.respond(
            to: Request(method: .post, target: "/later", headers: [:], body: Array("in".utf8)), logger: logger)
        #expect(later.status == 200 && later.bodyBytes == Array("later in".utf8))
        let refused = await router.respond(to: Request(method: .get, target: "/refused/later", headers: [:]), logger: logger)
        #expect(refused.status == 429)
    }
}
