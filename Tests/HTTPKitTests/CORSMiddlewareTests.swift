import Basics
import HTTPKit
import TestSupport
import Testing

/// Browsers on an allowed origin get their preflights answered with the route's own methods and
/// may read the answers; other origins get nothing they could use; uncovered paths are untouched.
@Suite("CORS middleware")
struct CORSMiddlewareTests {
    static let page = "http://127.0.0.1:8080"

    static func router(_ origins: [String] = [page]) -> Router {
        var router = Router()
        router.put("/buckets/*") { _, _ in Response(status: 200, headers: ["ETag": "\"e\""], body: Array("{}".utf8)) }
        router.delete("/buckets/*") { _, _ in Response(status: 200) }
        router.get("/stat/:entry") { _, _ in Response(status: 200) }
        router.use(CORSMiddleware(CORSPolicy(allowedOrigins: origins), paths: ["/", "/buckets/*"]))
        return router
    }

    static func send(
        _ router: Router, _ method: HTTPMethod, _ path: String, _ headers: HTTPHeaders
    ) async -> Response {
        await router.respond(
            to: Request(method: method, target: path, headers: headers), logger: Logger(label: "t", sink: LogSink.memory()))
    }

    static func preflight(origin: String, path: String = "/buckets/demo/objects/k/uploads/1/1") -> HTTPHeaders {
        ["Origin": origin, "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "authorization, content-md5"]
    }

    @Test func aPreflightFromAnAllowedOriginGetsTheRoutesMethodsAndTheUploadHeaders() async {
        let response = await Self.send(Self.router(), .options, "/buckets/demo/x", Self.preflight(origin: Self.page))
        #expect(response.status == 204)
        #expect(response.headers["Access-Control-Allow-Origin"] == Self.page)
        #expect(response.headers["Access-Control-Allow-Methods"] == "PUT, DELETE")
        let allowed = response.headers["Access-Control-Allow-Headers"] ?? ""
        for name in ["Authorization", "Content-Type", "Content-MD5", "X-Reqid"] { #expect(allowed.contains(name)) }
        #expect(response.headers["Vary"] == "Origin")
        #expect(response.bodyBytes.isEmpty)
    }

    @Test func anAnswerToAnAllowedOriginIsReadableWithItsReqidAndETag() async {
        let response = await Self.send(Self.router(), .put, "/buckets/demo/x", ["Origin": Self.page])
        #expect(response.status == 200)
        #expect(response.headers["Access-Control-Allow-Origin"] == Self.page)
        #expect(response.headers["Access-Control-Expose-Headers"] == "X-Reqid, ETag")
        #expect(response.headers["Vary"] == "Origin")
    }

    @Test func anotherOriginGetsNoAllowHeaderAndItsPreflightIs403() async {
        let other = "http://evil.example"
        let answer = await Self.send(Self.router(), .put, "/buckets/demo/x", ["Origin": other])
        #expect(answer.status == 200 && answer.headers["Access-Control-Allow-Origin"] == nil)
        #expect(answer.headers["Vary"] == "Origin")
        let preflight = await Self.send(Self.router(), .options, "/buckets/demo/x", Self.preflight(origin: other))
        #expect(preflight.status == 403 && preflight.headers["Access-Control-Allow-Origin"] == nil)
        #expect(String(decoding: preflight.bodyBytes, as: UTF8.self) == #"{"error":"origin not allowed"}"#)
    }

    @Test func aStarAllowsEveryOriginByNamingIt() async {
        let response = await Self.send(Self.router(["*"]), .put, "/buckets/demo/x", ["Origin": "https://app.example"])
        #expect(response.headers["Access-Control-Allow-Origin"] == "https://app.example")
    }

    @Test func uncoveredPathsAndAnEmptyListAddNothingAndPreflightsStay405() async {
        // "/" covers the root only (up-server's form upload), not every path under it.
        let stat = await Self.send(Self.router(), .options, "/stat/abc", Self.preflight(origin: Self.page))
        #expect(stat.status == 405 && stat.headers["Access-Control-Allow-Origin"] == nil && stat.headers["Vary"] == nil)
        let off = await Self.send(Self.router([]), .options, "/buckets/demo/x", Self.preflight(origin: Self.page))
        #expect(off.status == 405 && off.headers["Vary"] == nil)
        let unknown = await Self.send(Self.router(), .options, "/nowhere", Self.preflight(origin: Self.page))
        #expect(unknown.status == 404)
    }

    @Test(arguments: [
        ("http://127.0.0.1:8080", true), ("https://app.example.com", true), ("http://[::1]:3000", true), ("*", true),
        ("http://app.example.com/", false), ("http://app.example.com/path", false), ("app.example.com", false),
        ("http://App.Example.com", false), ("http://a.example:0", false), ("http://a.example:70000", false),
        ("ftp://a.example", false), ("http://", false),
    ])
    func originsAreCheckedAsBrowsersSendThem(origin: String, valid: Bool) {
        #expect((CORSPolicy.problem(in: [origin]) == nil) == valid)
    }
}
