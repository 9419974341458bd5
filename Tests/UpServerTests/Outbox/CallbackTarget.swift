import Basics
import HTTPKit
import Synchronization

/// A biz-server stand-in on `127.0.0.1:0`: records every callback request as received and
/// answers from a script (default `200 {"ok":true}`), optionally after a delay.
final class CallbackTarget: Sendable {
    /// One scripted answer.
    struct Answer: Sendable {
        var status = 200
        var body = #"{"ok":true}"#
        var contentType = "application/json"
        var delay: Duration = .zero
    }

    /// A request as the target saw it.
    struct Received: Sendable {
        var method: String
        var target: String
        var headers: [(String, String)]
        var body: [UInt8]
    }

    /// The shared state, in a class so the route handler can capture it.
    private final class State: Sendable {
        let value = Mutex<(received: [Received], script: [Answer], fallback: Answer)>(([], [], Answer()))
    }

    private let shared = State()
    private let server: HTTPServer
    let port: Int

    init() throws {
        let shared = self.shared
        var router = Router()
        router.post("/*", body: .collect()) { request, _ in
            let answer = shared.value.withLock { state -> Answer in
                state.received.append(Received(
                    method: request.method.rawValue, target: request.target,
                    headers: request.headers.fields.map { ($0.name, $0.value) }, body: request.body))
                return state.script.isEmpty ? state.fallback : state.script.removeFirst()
            }
            if answer.delay > .zero { try? await Task.sleep(for: answer.delay) }
            return Response(status: answer.status, headers: ["Content-Type": answer.contentType], body: Array(answer.body.utf8))
        }
        server = HTTPServer(
            configuration: .init(host: "127.0.0.1", port: 0, threadCount: 2, shutdownGracePeriod: .seconds(1)),
            router: router, logger: Logger(label: "callback-target", sink: .memory()))
        port = try server.start()
    }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Queues answers for the next requests.
    func script(_ answers: Answer...) { shared.value.withLock { $0.script += answers } }

    /// The answer given once the script is used up.
    func answerByDefault(_ answer: Answer) { shared.value.withLock { $0.fallback = answer } }

    /// Requests received so far.
    var received: [Received] { shared.value.withLock { $0.received } }

    func stop() async { await server.shutdown() }
}

extension CallbackTarget.Received {
    /// First header value by name, case-insensitively.
    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}
