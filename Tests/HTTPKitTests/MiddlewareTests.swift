import Basics
import Foundation
import HTTPKit
import TestSupport
import Testing

/// The middleware pieces compose: request ids, the access log and the error boundary run for
/// every request, in-process and over a socket, in their documented order; a server's own
/// boundary answers unexpected errors before the standard one.
@Suite("middleware")
struct MiddlewareTests {
    struct Unexpected: Error {}

    /// Records the order in which its hooks ran, under `name`.
    struct Tracer: Middleware {
        let name: String
        let trace: Locked<[String]>

        func prepare(_ request: inout Request) { trace.update { $0.append("prepare \(name)") } }
        func recover(_ error: any Error, request: Request, context: RequestContext) -> Response? {
            trace.update { $0.append("recover \(name)") }
            return nil
        }
        func finish(_ response: inout Response, for request: Request) {
            trace.update { $0.append("finish \(name)") }
            response.headers.add(name: "X-Trace", value: name)
        }
        func report(_ event: ResponseEvent, logger: Logger) { trace.update { $0.append("report \(name)") } }
    }

    static func failingRouter() -> Router {
        var router = Router()
        router.get("/boom") { _, _ in throw Unexpected() }
        router.get("/teapot") { _, _ in throw HTTPError(status: 418, message: "short and stout") }
        return router
    }

    @Test func hooksRunOutermostFirstOnTheWayInAndInnermostFirstOnTheWayOut() async {
        let trace = Locked<[String]>([])
        var router = Self.failingRouter()
        router.use(Tracer(name: "a", trace: trace))
        router.use(Tracer(name: "b", trace: trace))
        let response = await router.respond(
            to: Request(method: .get, target: "/boom"), logger: Logger(label: "t", sink: LogSink.memory()))
        #expect(response.status == 500)
        #expect(trace.value == [
            "prepare a", "prepare b", "recover b", "recover a", "finish b", "finish a", "report b", "report a",
        ])
        #expect(response.headers.values(for: "X-Trace") == ["b", "a"])
    }

    @Test func theStandardBoundaryLogsTheUnexpectedAndShowsOnlyInternalError() async throws {
        let logs = LogSink.memory()
        let response = await Self.failingRouter().respond(
            to: Request(method: .get, target: "/boom", requestID: "req-1"), logger: Logger(label: "t", sink: logs))
        #expect(response.status == 500)
        #expect(String(decoding: response.bodyBytes, as: UTF8.self) == #"{"error":"internal error"}"#)
        let failure = try #require(logs.capturedLines.first { $0.contains(#""msg":"handler failed""#) })
        #expect(failure.contains(#""level":"error""#) && failure.contains("Unexpected") && failure.contains("req-1"))
        #expect(failure.contains(#""route":"/boom""#))
    }

    @Test func aServersOwnBoundaryAnswersUnexpectedErrorsButNotKnownOnes() async {
        var router = Self.failingRouter()
        router.use(ErrorBoundary(status: 599, message: "server operation failed"))
        let logger = Logger(label: "t", sink: LogSink.memory())
        let boom = await router.respond(to: Request(method: .get, target: "/boom"), logger: logger)
        #expect(boom.status == 599)
        #expect(String(decoding: boom.bodyBytes, as: UTF8.self) == #"{"error":"server operation failed"}"#)
        let teapot = await router.respond(to: Request(method: .get, target: "/teapot"), logger: logger)
        #expect(teapot.status == 418)
        #expect(String(decoding: teapot.bodyBytes, as: UTF8.self) == #"{"error":"short and stout"}"#)
    }

    @Test func theSameStackRunsOverASocketWithTheRequestIDEchoedOrMade() async throws {
        var router = Self.failingRouter()
        router.use(ErrorBoundary(status: 599, message: "server operation failed"))
        try await withServer(router) { port, _, logs in
            let echoed = try await fetch(port, "GET", "/boom", headers: [("X-Reqid", "client-id.1")])
            #expect(echoed.status == 599)
            #expect(echoed.headers["X-Reqid"] == "client-id.1")
            let made = try await fetch(port, "GET", "/nowhere", headers: [("X-Reqid", "bad id with spaces")])
            #expect(made.status == 404)
            let id = try #require(made.headers["X-Reqid"])
            #expect(id.count == 16 && RequestID.isAcceptable(id))
            let lines = logs.capturedLines.filter { $0.contains(#""msg":"request""#) }
            #expect(lines.count == 2)
            #expect(lines.contains { $0.contains(#""reqid":"client-id.1""#) && $0.contains(#""status":599"#) })
            #expect(lines.contains { $0.contains(#""reqid":"\#(id)""#) && $0.contains(#""status":404"#) })
        }
    }

    @Test func aHandlersFieldsNeverReplaceTheAccessLinesOwn() async throws {
        let reserved = [
            "ts", "level", "logger", "msg", "method", "path", "status", "bytes", "duration_ms", "reqid", "remote",
        ]
        // Same lengths or prefixes as reserved names, but not them: these must stay.
        let kept = ["tz", "mss", "paths", "Status", "remote_ip", "duration"]
        var router = Router()
        router.get("/fields") { _, context in
            for name in reserved + kept { context.addLogFields([name: "from-handler"]) }
            return Response(status: 200, body: Array("ok".utf8))
        }
        let logs = LogSink.memory()
        _ = await router.respond(
            to: Request(method: .get, target: "/fields", requestID: "req-7"), logger: Logger(label: "t", sink: logs))
        let line = try #require(logs.capturedLines.first { $0.contains(#""msg":"request""#) })
        for name in reserved {
            #expect(line.components(separatedBy: "\"\(name)\":").count == 2, "\(name) appears once")
        }
        for name in kept { #expect(line.contains("\"\(name)\":\"from-handler\"")) }
        #expect(!line.contains(#":"from-handler","level""#) && line.contains(#""reqid":"req-7""#))
        #expect(line.contains(#""method":"GET""#) && line.contains(#""status":200"#))
    }

    @Test func aStackWithoutTheAccessLogWritesNoRequestLine() async {
        var router = Self.failingRouter()
        router.middleware = MiddlewareStack([RequestIDMiddleware(), ErrorBoundary()])
        let logs = LogSink.memory()
        let response = await router.respond(
            to: Request(method: .get, target: "/teapot"), logger: Logger(label: "t", sink: logs))
        #expect(response.status == 418)
        #expect(!logs.capturedLines.contains { $0.contains(#""msg":"request""#) })
    }

    @Test func replacingTheRouterOfARunningServerServesTheNewRoutes() async throws {
        var first = Router()
        first.get("/v") { _, _ in Response(body: Array("one".utf8)) }
        var second = Router()
        second.get("/v") { _, _ in Response(body: Array("two".utf8)) }
        try await withServer(first) { port, server, _ in
            let one = try await fetch(port, "GET", "/v")
            #expect(one.text == "one")
            server.router = second
            let two = try await fetch(port, "GET", "/v")
            #expect(two.text == "two")
        }
    }
}
