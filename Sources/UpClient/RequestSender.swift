import Foundation
import HTTPTransport
import Synchronization
import UpCore

/// Sends one up-host request with retries (``RetryPolicy``), fail-over between up hosts, a fresh
/// token after a 401, the rate limit (``UploadPacer``), and pause/abort/file changes turned into
/// ``UploadError``.
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
        /// 579: stored, but the app's callback failed (the final requests only).
        case storedCallbackFailed(TransportResponse)
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
    private let pacer: UploadPacer?
    private let watch: FileWatch?
    private let state = Mutex(State())

    init(
        hosts: [String], transport: any HTTPTransport, tokens: TokenProvider, policy: RetryPolicy, control: UploadControl,
        pacer: UploadPacer? = nil, watch: FileWatch? = nil
    ) {
        self.hosts = hosts.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        self.transport = transport
        self.tokens = tokens
        self.policy = policy
        self.control = control
        self.pacer = pacer
        self.watch = watch
    }

    /// Bytes of the file sent so far (the `payload` of each attempt, retries included; not the
    /// multipart envelope of a form upload nor the ctx list of mkfile).
    var bytesSent: Int64 { state.withLock { $0.bytesSent } }

    /// The host requests currently go to.
    var currentHost: String { state.withLock { hosts[$0.hostIndex % hosts.count] } }

    /// The error for a stopped upload: the file change that stopped it, else abort or pause.
    func stopError() -> UploadError {
        if let change = watch?.change { return change }
        return control.isAborted ? UploadError(.aborted, "upload aborted") : UploadError(.paused, "upload paused")
    }

    private var stopped: Bool { Task.isCancelled || control.isPaused || control.isAborted || watch?.change != nil }

    /// Sends the request `build` makes until it succeeds, is stale, or fails for good.
    ///
    /// - Parameters:
    ///   - payload: How many bytes of the file the body carries (for ``bytesSent``).
    ///   - completes: The request completes the upload (mkfile, complete, the form POST): the
    ///     file must still be what it was when the upload began, checked before every attempt.
    func send(payload: Int64 = 0, completes: Bool = false, _ build: Builder) async throws(UploadError) -> Outcome {
        var attempt = 0
        var refreshed = false
        while true {
            if stopped { throw stopError() }
            let token = try await tokens.token()
            let host = currentHost
            var request = build(host, token.text)
            if let pacer, request.body.count > 0 {
                do { try await pacer.admit(request.body.count) } catch { throw stopError() }
                request.maxSendBytesPerSecond = pacer.bytesPerSecond
                // Sending at the rate takes this long on top of the server's time: not a stall.
                request.timeout += pacer.duration(of: request.body.count)
            }
            if completes { try watch?.check() }
            state.withLock { $0.bytesSent += payload }
            let decision: RetryPolicy.Decision
            let response: TransportResponse
            do {
                response = try await transport.send(request)
            } catch {
                if stopped { throw stopError() }
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
            case .storedCallbackFailed where completes: return .storedCallbackFailed(response)
            case .fail, .storedCallbackFailed: throw Self.serverError(response, request: request)
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
    /// A 401, and a 403 `key doesn't match with scope` (§1.3), refuse the token: ``UploadError/Kind/token``.
    static func serverError(_ response: TransportResponse, request: TransportRequest) -> UploadError {
        let text = (try? JSONValue.parse(response.body))?["error"]?.stringValue ?? String(response.text.prefix(300))
        let refusesToken = response.status == 401 || (response.status == 403 && text == UpError.Code.keyMismatch.message)
        return UploadError(
            refusesToken ? .token : .server(status: response.status),
            "\(request.method) \(request.url) → \(response.status): \(text)", requestID: response[header: "X-Reqid"])
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
