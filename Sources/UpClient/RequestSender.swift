import Foundation
import HTTPTransport
import Synchronization
import UpCore

/// Sends one up-host request with retries (``RetryPolicy``), fail-over between up hosts, a fresh
/// token after a 401, and pause/abort turned into ``UploadError``.
///
/// The current host is shared by every request of the upload: once a host failed over, later
/// requests start on the next one too.
final class RequestSender: Sendable {
    /// The outcome of a request that got a final response.
    enum Outcome: Sendable {
        /// 2xx.
        case success(TransportResponse)
        /// 701 / 612: the ctx or upload id is stale.
        case stale(TransportResponse)
    }

    /// Builds a request for a host (`scheme://host[:port]`, no trailing slash) and a token.
    typealias Builder = @Sendable (_ host: String, _ token: String) -> TransportRequest

    private struct State {
        var hostIndex = 0
        var bytesSent: Int64 = 0
    }

    let hosts: [String]
    private let transport: any HTTPTransport
    private let tokens: TokenProvider
    private let policy: RetryPolicy
    private let control: UploadControl
    private let state = Mutex(State())

    init(hosts: [String], transport: any HTTPTransport, tokens: TokenProvider, policy: RetryPolicy, control: UploadControl) {
        self.hosts = hosts.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        self.transport = transport
        self.tokens = tokens
        self.policy = policy
        self.control = control
    }

    /// Request body bytes handed to the transport so far (retries included).
    var bytesSent: Int64 { state.withLock { $0.bytesSent } }

    /// The host requests currently go to.
    var currentHost: String { state.withLock { hosts[$0.hostIndex % hosts.count] } }

    /// The error for a stopped upload.
    func stopError() -> UploadError {
        control.isAborted ? UploadError(.aborted, "upload aborted") : UploadError(.paused, "upload paused")
    }

    /// Sends the request `build` makes until it succeeds, is stale, or fails for good.
    func send(_ build: Builder) async throws(UploadError) -> Outcome {
        var attempt = 0
        var refreshed = false
        while true {
            if Task.isCancelled || control.isPaused || control.isAborted { throw stopError() }
            let token = try await tokens.token()
            let host = currentHost
            let request = build(host, token.text)
            state.withLock { $0.bytesSent += request.body.count }
            let decision: RetryPolicy.Decision
            let response: TransportResponse
            do {
                response = try await transport.send(request)
            } catch {
                if Task.isCancelled || control.isPaused || control.isAborted { throw stopError() }
                if let error = error as? TransportError, case .io = error.kind {
                    throw UploadError(.file, "cannot read the file region: \(error.message)")
                }
                let next = policy.decideNetworkFailure(attempt: attempt, jitter: Double.random(in: 0...1))
                guard case .retry(let delay, _) = next else {
                    throw UploadError(.network, "\(request.method) \(request.url): \(error)")
                }
                failOver(from: host)
                attempt += 1
                try await sleep(delay)
                continue
            }
            if response.status == 401, !refreshed, await tokens.canRefresh {
                refreshed = true
                _ = try await tokens.token(forceRefresh: true)
                continue
            }
            decision = policy.decide(
                status: response.status, attempt: attempt, retryAfter: response[header: "Retry-After"],
                jitter: Double.random(in: 0...1))
            switch decision {
            case .success: return .success(response)
            case .redo: return .stale(response)
            case .fail: throw Self.serverError(response, request: request)
            case .retry(let delay, let nextHost):
                if nextHost { failOver(from: host) }
                attempt += 1
                try await sleep(delay)
            }
        }
    }

    /// One attempt on the current host whatever the pause/abort state (a v2 abort after the
    /// upload was stopped).
    func sendIgnoringStop(_ build: Builder) async throws -> TransportResponse {
        let token = try await tokens.token()
        return try await transport.send(build(currentHost, token.text))
    }

    /// The typed error for a final non-2xx response: status, the server's `error` text, X-Reqid.
    static func serverError(_ response: TransportResponse, request: TransportRequest) -> UploadError {
        let text = (try? JSONValue.parse(response.body))?["error"]?.stringValue ?? String(response.text.prefix(300))
        return UploadError(
            .server(status: response.status), "\(request.method) \(request.url) → \(response.status): \(text)",
            requestID: response[header: "X-Reqid"])
    }

    private func failOver(from host: String) {
        state.withLock { state in
            if hosts[state.hostIndex % hosts.count] == host { state.hostIndex = (state.hostIndex + 1) % hosts.count }
        }
    }

    private func sleep(_ delay: Duration) async throws(UploadError) {
        do { try await Task.sleep(for: delay) } catch { throw stopError() }
    }
}
