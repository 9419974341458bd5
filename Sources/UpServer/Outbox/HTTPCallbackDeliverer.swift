import Basics
import HTTPTransport
import NativeCrypto
import UpCore

/// Sends upload callbacks over HTTP (qiniu-protocol.md §3.1–§3.4): every URL of the entry in
/// turn, signed with QBox (default) or Qiniu, until one answers 200 with a JSON body.
///
/// Which key signs: `CallbackRequest.authScheme` is `<scheme>` or `<scheme>:<AccessKey>`. The
/// committer writes the AccessKey of the upload token, so the biz-server that issued the token
/// verifies the callback with the same key pair (what Qiniu does). An entry without one (or
/// whose key was removed from the configuration since) is signed with the configuration's first
/// key pair sorted by AccessKey — deterministic, and the only pair in the usual one-key setup.
/// The AccessKey is not a secret (it is in every token); the SecretKey never leaves the KeyRing.
struct HTTPCallbackDeliverer: CallbackDelivering {
    /// The signature schemes of §3.2 and §3.3.
    enum Scheme: Sendable, Equatable {
        /// `QBox AK:sign` over target, "\n" and (form only) the body.
        case qbox
        /// `Qiniu AK:sign` over method, target, Host, Content-Type, `X-Qiniu-*` and body.
        case qiniu
    }

    /// The largest callback reply accepted: it is relayed to the uploader as-is (§3.4), so it
    /// must stay small; Qiniu's own limit is not documented.
    static let maxReplyBytes = 1 << 20

    /// The signing keys in force (a configuration reload may replace them).
    private var keyRing: @Sendable () -> KeyRing
    private let transport: any HTTPTransport
    private let clock: any WallClock
    private let timeout: Duration
    private let logger: Logger

    /// Creates a deliverer.
    ///
    /// - Parameters:
    ///   - keys: AccessKey → SecretKey pairs that may sign callbacks (never logged).
    ///   - transport: The HTTP client.
    ///   - clock: Source of `X-Qiniu-Date`.
    ///   - timeoutSeconds: Per-URL connect+read budget (§3.1 and Appendix A.2 recommend 5 s).
    ///   - logger: Where each URL's outcome is logged (URL without its query, never a signature).
    init(
        keys: [String: String], transport: any HTTPTransport, clock: any WallClock, timeoutSeconds: Double,
        logger: Logger
    ) {
        let ring = KeyRing(keys)
        self.keyRing = { ring }
        self.transport = transport
        self.clock = clock
        self.timeout = .milliseconds(Int64((max(timeoutSeconds, 0.001) * 1000).rounded()))
        self.logger = logger
    }

    /// Creates a deliverer signing with the key pairs of `credentials` at the time of each callback.
    init(
        credentials: UpCredentials, transport: any HTTPTransport, clock: any WallClock, timeoutSeconds: Double,
        logger: Logger
    ) {
        self.init(keys: [:], transport: transport, clock: clock, timeoutSeconds: timeoutSeconds, logger: logger)
        self.keyRing = { credentials.keys }
    }

    /// Tries every URL once, in order; see `CallbackDelivering.deliver(_:)`.
    func deliver(_ entry: CallbackRequest) async -> CallbackOutcome {
        guard let (scheme, accessKey, mac) = credentials(for: entry.authScheme) else {
            return .failed(reason: "no access key configured to sign the callback")
        }
        var failures: [String] = []
        for url in entry.urls {
            let request = makeRequest(url: url, entry: entry, scheme: scheme, accessKey: accessKey, mac: mac)
            let shownURL = CallbackURL.redacted(url)
            do {
                let response = try await transport.send(request)
                if response.status == 200, (try? JSONValue.parse(response.body)) != nil {
                    logger.info("callback delivered", ["url": .string(shownURL)])
                    return .delivered(reply: response.body)
                }
                // qiniu-protocol.md §3.4: non-200, or [ambiguous] a 200 that is not JSON, is a failure;
                // Appendix A.3: the 579 text names the callback status.
                let why = response.status == 200 ? "reply is not JSON" : "status \(response.status)"
                failures.append("callback url \(shownURL): \(why)")
            } catch let error as TransportError {
                failures.append("callback url \(shownURL): \(error.summary)")
            } catch {
                failures.append("callback url \(shownURL): request failed")
            }
            logger.warning("callback attempt failed", ["url": .string(shownURL), "reason": .string(failures.last ?? "")])
            if Task.isCancelled { break }
        }
        if failures.isEmpty { failures.append("no callback url") }
        return .failed(reason: failures.joined(separator: "; "))
    }

    /// The request for one URL (§3.1): POST, the stored body and content type (form WITHOUT a
    /// charset — the SDK verifiers sign the body only for that exact string), signed.
    func makeRequest(
        url: String, entry: CallbackRequest, scheme: Scheme, accessKey: String, mac: HMACSHA1
    ) -> TransportRequest {
        let body = Array(entry.body.utf8)
        let target = RequestTarget.of(url: url)
        var headers: [(String, String)] = [("Content-Type", entry.contentType)]
        let authorization: String
        switch scheme {
        case .qbox:
            // §3.2: the host is not signed; send Host only to honour callbackHost.
            if let host = entry.host, !host.isEmpty { headers.append(("Host", host)) }
            authorization = QBoxSignature.sign(
                target: target, body: body, contentType: entry.contentType, accessKey: accessKey, mac: mac)
        case .qiniu:
            // §3.3: Host is signed, so it is always sent explicitly — exactly the signed text,
            // whatever the client library would derive (default ports, IPv6 brackets).
            let host = entry.host.flatMap { $0.isEmpty ? nil : $0 } ?? CallbackURL.authority(of: url)
            headers.append(("Host", host))
            headers.append(("X-Qiniu-Date", QiniuDate.format(clock.unixSeconds)))
            authorization = QiniuSignature.sign(
                method: "POST", target: target, host: host, contentType: entry.contentType, headers: headers,
                body: body, accessKey: accessKey, mac: mac)
        }
        headers.append(("Authorization", authorization))
        return TransportRequest(
            method: "POST", url: url, headers: headers, body: .bytes(body), timeout: timeout,
            connectTimeout: timeout, maxResponseBytes: Self.maxReplyBytes)
    }

    /// Scheme and key for `authScheme` (`qbox`, `QBox`, `qiniu`, optionally `:<AccessKey>`).
    func credentials(for authScheme: String) -> (Scheme, String, HMACSHA1)? {
        let keys = keyRing()
        let parts = authScheme.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let scheme: Scheme = parts.first?.lowercased() == "qiniu" ? .qiniu : .qbox
        if parts.count == 2, let mac = keys.mac(for: parts[1]) { return (scheme, String(parts[1]), mac) }
        guard let first = keys.accessKeys.first, let mac = keys.mac(for: first) else { return nil }
        return (scheme, first, mac)
    }
}
