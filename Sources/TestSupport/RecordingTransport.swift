public import HTTPTransport
import Synchronization

/// An ``HTTPTransport`` for tests: records every request and answers with scripted replies in
/// order, so code that calls out (callbacks, the upload client) is tested without sockets.
///
/// Each instance holds its own script; there is no shared state between tests. A request that
/// finds the script empty fails with ``TransportError/Kind/other`` and a message saying so,
/// rather than trapping.
public final class RecordingTransport: HTTPTransport {
    /// One scripted answer.
    public enum Reply: Sendable {
        /// Answer with this response (progress is reported as the whole body sent first).
        case response(TransportResponse)
        /// Fail with this error.
        case failure(TransportError)
    }

    private struct State {
        var requests: [TransportRequest] = []
        var replies: [Reply]
    }

    private let state: Mutex<State>

    /// Creates a transport that answers with `replies`, first to last.
    public init(_ replies: [Reply] = []) {
        state = Mutex(State(replies: replies))
    }

    /// Appends a reply to the script.
    public func enqueue(_ reply: Reply) {
        state.withLock { $0.replies.append(reply) }
    }

    /// The requests received so far, in order.
    public var requests: [TransportRequest] { state.withLock { $0.requests } }

    /// Replies not yet used.
    public var remainingReplies: Int { state.withLock { $0.replies.count } }

    /// Records `request` and returns (or throws) the next scripted reply.
    public func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        let reply = state.withLock { state -> Reply? in
            state.requests.append(request)
            return state.replies.isEmpty ? nil : state.replies.removeFirst()
        }
        switch reply {
        case .response(let response):
            if request.body.count > 0 { request.progress?(request.body.count) }
            return response
        case .failure(let error):
            throw error
        case nil:
            throw TransportError(.other, "RecordingTransport: no scripted reply for \(request.method) \(request.url)")
        }
    }
}
