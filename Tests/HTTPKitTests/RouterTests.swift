import Basics
import HTTPKit
import Testing

@Suite struct RouterTests {
    static func echoRouter() -> Router {
        var router = Router()
        router.get("/v1/uploads/:id") { request, _ in
            Response(body: Array("upload \(request.parameters["id"] ?? "-")".utf8))
        }
        router.get("/v1/uploads/stats") { _, _ in Response(body: Array("stats".utf8)) }
        router.delete("/v1/uploads/:id") { _, _ in Response(status: 204) }
        router.post("/mkfile/:size/*") { request, _ in
            Response(body: Array("\(request.parameters["size"] ?? "")|\(request.parameters["*"] ?? "")".utf8))
        }
        router.post("/small", body: .collect(maxBytes: 4)) { _, _ in Response(status: 204) }
        router.get("/fail") { _, _ in throw HTTPError(status: 429, message: "slow down", headers: ["Retry-After": "1"]) }
        router.get("/crash") { _, _ in throw CocoaLikeError() }
        return router
    }

    struct CocoaLikeError: Error {}

    let logs = LogSink.memory()
    var logger: Logger { Logger(label: "test", sink: logs) }

    func text(_ response: Response) -> String { String(decoding: response.bodyBytes, as: UTF8.self) }

    @Test func capturesPercentDecodedParameters() async {
        let response = await Self.echoRouter().respond(to: Request(method: .get, target: "/v1/uploads/a%20b?x=1"), logger: logger)
        #expect(response.status == 200)
        #expect(text(response) == "upload a b")
    }

    @Test func prefersLiteralSegmentsOverParameters() async {
        let response = await Self.echoRouter().respond(to: Request(method: .get, target: "/v1/uploads/stats"), logger: logger)
        #expect(text(response) == "stats")
    }

    @Test func wildcardCapturesRawRestOfPath() async {
        let target = "/mkfile/1024/key/a2V5/x:foo/YmFy%3D"
        let response = await Self.echoRouter().respond(to: Request(method: .post, target: target), logger: logger)
        #expect(text(response) == "1024|key/a2V5/x:foo/YmFy%3D")
    }

    @Test func unknownPathIs404JSON() async {
        let response = await Self.echoRouter().respond(to: Request(method: .get, target: "/nope"), logger: logger)
        #expect(response.status == 404)
        #expect(text(response) == #"{"error":"not found"}"#)
        #expect(response.headers["content-type"] == "application/json")
    }

    @Test func wrongMethodIs405WithAllow() async {
        let response = await Self.echoRouter().respond(to: Request(method: .put, target: "/v1/uploads/7"), logger: logger)
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "GET, DELETE")
        #expect(text(response) == #"{"error":"method not allowed"}"#)
    }

    @Test func literalRouteWinsWhateverTheOrderOfRegistration() async {
        // echoRouter registers "/v1/uploads/:id" before "/v1/uploads/stats"; here the other way
        // round, and a literal registered twice: the first one answers.
        var router = Router()
        router.get("/v1/uploads/stats") { _, _ in Response(body: Array("stats".utf8)) }
        router.get("/v1/uploads/:id") { _, _ in Response(body: Array("id".utf8)) }
        router.get("/v1/uploads/stats") { _, _ in Response(body: Array("second".utf8)) }
        router.post("/v1/uploads/stats") { _, _ in Response(body: Array("post".utf8)) }
        #expect(text(await router.respond(to: Request(method: .get, target: "/v1/uploads/stats"), logger: logger)) == "stats")
        #expect(text(await router.respond(to: Request(method: .post, target: "/v1/uploads/stats"), logger: logger)) == "post")
        #expect(text(await router.respond(to: Request(method: .get, target: "/v1/uploads/7"), logger: logger)) == "id")
        let put = await router.respond(to: Request(method: .put, target: "/v1/uploads/stats"), logger: logger)
        #expect(put.status == 405)
        #expect(put.headers["Allow"] == "GET, POST")
        guard case .matched(let route, _) = router.match(method: .head, path: "/v1/uploads/stats") else {
            Issue.record("HEAD of a literal GET route did not match")
            return
        }
        #expect(route.method == .get)
    }

    @Test func headFallsBackToGet() {
        guard case .matched(let route, _) = Self.echoRouter().match(method: .head, path: "/v1/uploads/1") else {
            Issue.record("no match")
            return
        }
        #expect(route.method == .get)
    }

    @Test func trailingSlashAndExtraSegmentsDoNotMatch() {
        let router = Self.echoRouter()
        if case .notFound = router.match(method: .get, path: "/v1/uploads/1/extra") {} else { Issue.record("matched extra") }
        if case .notFound = router.match(method: .get, path: "/v1/uploads/") {} else { Issue.record("matched empty id") }
    }

    @Test func collectedBodyOverLimitIs413() async {
        let request = Request(method: .post, target: "/small", body: Array("12345".utf8))
        let response = await Self.echoRouter().respond(to: request, logger: logger)
        #expect(response.status == 413)
    }

    @Test func httpErrorRendersItsStatusMessageAndHeaders() async {
        let response = await Self.echoRouter().respond(to: Request(method: .get, target: "/fail"), logger: logger)
        #expect(response.status == 429)
        #expect(text(response) == #"{"error":"slow down"}"#)
        #expect(response.headers["retry-after"] == "1")
    }

    @Test func otherErrorsAre500AndLogged() async {
        let response = await Self.echoRouter().respond(to: Request(method: .get, target: "/crash"), logger: logger)
        #expect(response.status == 500)
        #expect(text(response) == #"{"error":"internal error"}"#)
        #expect(logs.capturedLines.contains { $0.contains("CocoaLikeError") })
    }

    @Test func rejectsMalformedPatterns() {
        #expect(RoutePattern("no-slash") == nil)
        #expect(RoutePattern("/a/*/b") == nil)
        #expect(RoutePattern("/a/:") == nil)
        #expect(RoutePattern("/a/:id/*") != nil)
    }
}
