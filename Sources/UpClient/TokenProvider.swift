import Basics
import Foundation
import HTTPTransport
import UpCore

/// Hands out the upload token for one upload: a fixed one as is, or one from biz-server,
/// refreshed (same traceId) when little of its lifetime remains, or at once after an up host
/// answered 401.
actor TokenProvider {
    /// A token and what the client needs to know about it.
    struct Token: Sendable {
        /// The token text for `Authorization: UpToken …` / the form's `token` field.
        var text: String
        /// The policy's scope (`bucket[:key]`).
        var scope: String
        /// The bucket.
        var bucket: String
        /// The policy deadline, unix seconds.
        var expiresAt: Int64
        /// Up hosts suggested by biz-server (empty for a fixed token).
        var upHosts: [String]
    }

    /// What biz-server is told about the upload.
    struct Subject: Sendable {
        var key: String?
        var fname: String?
        var fsize: Int64
        var mimeType: String?
    }

    private let source: TokenSource
    private let subject: Subject
    private let transport: any HTTPTransport
    private let clock: any WallClock
    private let refreshMargin: Int64
    private let policy: RetryPolicy
    private var current: Token?
    private var issuedAt: Int64 = 0
    private var traceID: String?
    /// Tokens fetched from biz-server so far.
    private(set) var fetches = 0

    init(
        source: TokenSource, subject: Subject, transport: any HTTPTransport, clock: any WallClock,
        refreshMargin: Duration, policy: RetryPolicy
    ) {
        self.source = source
        self.subject = subject
        self.transport = transport
        self.clock = clock
        self.refreshMargin = refreshMargin.components.seconds
        self.policy = policy
    }

    /// Whether a 401 from an up host is worth a fresh token.
    var canRefresh: Bool {
        if case .bizServer = source { return true }
        return false
    }

    /// The token to use now; fetched or refreshed as needed.
    func token(forceRefresh: Bool = false) async throws(UploadError) -> Token {
        switch source {
        case .fixed(let text):
            if let current { return current }
            let token = try Self.parse(fixed: text)
            current = token
            return token
        case .bizServer(let url, let apiKey, let vars):
            let now = clock.unixSeconds
            if let current, !forceRefresh {
                // Refresh when less than the margin remains — but never more often than every
                // half lifetime, so a short-lived token is not fetched before every request.
                let margin = min(refreshMargin, max(0, (current.expiresAt - issuedAt) / 2))
                if current.expiresAt - now > margin { return current }
            }
            let token = try await fetch(url: url, apiKey: apiKey, vars: vars)
            current = token
            issuedAt = now
            return token
        }
    }

    /// Reads scope and deadline from a token's policy (no signature check: the client has no key).
    static func parse(fixed text: String) throws(UploadError) -> Token {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 3, let json = URLSafeBase64.decode(fields[2]),
            let policy = try? PutPolicy(jsonBytes: json)
        else { throw UploadError(.token, "not an upload token (AK:signature:policy)") }
        return Token(text: text, scope: policy.scope, bucket: policy.bucket, expiresAt: policy.deadline, upHosts: [])
    }

    private func fetch(url: String, apiKey: String, vars: [String: String]) async throws(UploadError) -> Token {
        let endpoint = url.hasSuffix("/v1/uptoken") ? url : (url.hasSuffix("/") ? String(url.dropLast()) : url) + "/v1/uptoken"
        var members: [(key: String, value: JSONValue)] = []
        if let key = subject.key { members.append(("key", .string(key))) }
        if let fname = subject.fname { members.append(("fname", .string(fname))) }
        members.append(("fsize", .int(subject.fsize)))
        if let mime = subject.mimeType { members.append(("mimeType", .string(mime))) }
        if !vars.isEmpty {
            members.append(("vars", .object(vars.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) })))
        }
        if let traceID { members.append(("traceId", .string(traceID))) }
        let body = JSONValue.object(members).serializedBytes()
        var attempt = 0
        while true {
            let request = TransportRequest(
                method: "POST", url: endpoint,
                headers: [("Authorization", "Bearer " + apiKey), ("Content-Type", "application/json")],
                body: .bytes(body), timeout: .seconds(30), maxResponseBytes: 1 << 20)
            let decision: RetryPolicy.Decision
            var response: TransportResponse?
            do {
                response = try await transport.send(request)
                decision = policy.decide(
                    status: response!.status, attempt: attempt, retryAfter: response![header: "Retry-After"],
                    jitter: Double.random(in: 0...1))
            } catch let error as TransportError where error.kind == .cancelled {
                throw UploadError(.paused, "cancelled while asking biz-server for a token")
            } catch {
                if Task.isCancelled { throw UploadError(.paused, "cancelled while asking biz-server for a token") }
                decision = policy.decideNetworkFailure(attempt: attempt, jitter: Double.random(in: 0...1))
                // Not a refusal: nobody answered (up-cli exit 1, like any network failure).
                if decision == .fail { throw UploadError(.network, "biz-server \(endpoint) unreachable: \(error)") }
            }
            switch decision {
            case .success:
                fetches += 1
                return try parse(reply: response!)
            case .retry(let delay, _):
                attempt += 1
                do { try await Task.sleep(for: delay) } catch {
                    throw UploadError(.paused, "cancelled while asking biz-server for a token")
                }
            case .redo, .fail, .storedCallbackFailed:
                let status = response?.status ?? 0
                let text = (try? JSONValue.parse(response?.body ?? []))?["error"]?.stringValue ?? response?.text ?? ""
                // A 4xx is biz-server saying no (API key, prefix, size); a 5xx is biz-server failing.
                let refused = (400..<500).contains(status)
                throw UploadError(
                    refused ? .token : .server(status: status),
                    (refused ? "biz-server refused the token" : "biz-server failed") + " (\(status)): \(text)",
                    requestID: response?[header: "X-Reqid"])
            }
        }
    }

    private func parse(reply response: TransportResponse) throws(UploadError) -> Token {
        guard let json = try? JSONValue.parse(response.body), let text = json["uptoken"]?.stringValue else {
            throw UploadError(.token, "biz-server reply has no uptoken", requestID: response[header: "X-Reqid"])
        }
        var token = try Self.parse(fixed: text)
        if let expiry = json["expiresAt"]?.int64Value { token.expiresAt = expiry }
        if case .array(let hosts) = json["upHosts"] { token.upHosts = hosts.compactMap(\.stringValue) }
        if traceID == nil { traceID = json["traceId"]?.stringValue }
        return token
    }
}
