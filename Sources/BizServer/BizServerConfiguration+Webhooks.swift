import Basics
import ServerShell

/// Loading `webhooks[]` (issue 11 §2). Each entry, read by the shell's strict reader (an
/// unknown key is one line with a did-you-mean, exit 78):
///
/// | key | default |
/// |---|---|
/// | `url` | required: `https://…` or `http://…`; unique among the entries |
/// | `secrets` | required: 1…8 `whsec_<base64>` secrets of ≥ 16 bytes; each signs every delivery |
/// | `events` | `["upload.completed"]` (the only event type) |
/// | `retryScheduleSeconds` | `[0, 5, 300, 1800, 7200, 18000, 36000, 36000]`: one attempt per element, each after that many seconds (+ up to 10 % jitter); 1…50 elements of 0…604800 |
/// | `timeoutSeconds` | `15`, over 0 and at most 300 |
/// | `allowPrivateTargets` | `false`: a URL naming or resolving to a loopback, private or link-local address is refused |
extension BizServerConfiguration {
    /// Sets ``webhooks`` (and ``webhookWarnings``) from the file; `resolve` looks a host name up
    /// (the system resolver; tests pass their own).
    mutating func readWebhooks(
        _ file: ConfigurationObject, resolve: (String) -> [String] = WebhookTarget.systemResolve
    ) throws(ConfigurationError) {
        var endpoints: [WebhookEndpoint] = []
        var warnings: [StartupWarning] = []
        for entry in try file.objects("webhooks") ?? [] {
            let endpoint = try Self.webhook(entry)
            guard !endpoints.contains(where: { $0.url == endpoint.url }) else {
                throw entry.invalid("url", "repeats the url of another webhooks[] entry")
            }
            if let warning = try Self.checkTarget(endpoint, entry, resolve: resolve) { warnings.append(warning) }
            endpoints.append(endpoint)
        }
        webhooks = endpoints
        webhookWarnings = warnings
    }

    private static func webhook(_ entry: ConfigurationObject) throws(ConfigurationError) -> WebhookEndpoint {
        let url = try entry.requiredString("url")
        guard WebhookTarget.host(of: url) != nil else {
            throw entry.invalid("url", "must be an http:// or https:// URL with a host, got \"\(url.prefix(80))\"")
        }
        guard let secrets = try entry.strings("secrets") else { throw entry.missing("secrets") }
        guard (1...8).contains(secrets.count) else { throw entry.invalid("secrets", "must list 1…8 secrets") }
        for (index, secret) in secrets.enumerated() where WebhookSigner.key(secret) == nil {
            throw entry.invalid(
                "secrets[\(index)]",
                "must be whsec_ followed by the base64 of at least \(WebhookSigner.minimumKeyBytes) random bytes "
                    + "(e.g. echo whsec_$(openssl rand -base64 32))")
        }
        let events = try entry.strings("events") ?? WebhookEndpoint.knownEvents
        guard !events.isEmpty else { throw entry.invalid("events", "must name at least one event type") }
        for event in events where !WebhookEndpoint.knownEvents.contains(event) {
            throw entry.invalid("events", "names unknown event type \"\(event.prefix(40))\" (known: upload.completed)")
        }
        let schedule = try entry.integers("retryScheduleSeconds", as: Int64.self, in: 0...604_800)
            ?? WebhookEndpoint.defaultRetrySchedule
        guard (1...50).contains(schedule.count) else {
            throw entry.invalid("retryScheduleSeconds", "must list 1…50 delays (one attempt each)")
        }
        let timeout = try entry.number("timeoutSeconds") ?? WebhookEndpoint.defaultTimeoutSeconds
        guard timeout > 0, timeout <= 300 else { throw entry.invalid("timeoutSeconds", "must be over 0 and at most 300") }
        return WebhookEndpoint(
            url: url, secrets: secrets, events: events, retryScheduleSeconds: schedule, timeoutSeconds: timeout,
            allowPrivateTargets: try entry.bool("allowPrivateTargets") ?? false)
    }

    /// Refuses a private target unless allowed (then: a warning); warns about a name that does
    /// not resolve now (deliveries to it fail and are retried until it does).
    private static func checkTarget(
        _ endpoint: WebhookEndpoint, _ entry: ConfigurationObject, resolve: (String) -> [String]
    ) throws(ConfigurationError) -> StartupWarning? {
        let host = WebhookTarget.host(of: endpoint.url) ?? ""
        let texts = IPAddress(host) != nil ? [host] : resolve(host)
        let privateOnes = texts.filter { IPAddress($0).map(WebhookTarget.isPrivate) ?? false }
        if let first = privateOnes.first {
            guard endpoint.allowPrivateTargets else {
                throw entry.invalid(
                    "url", "resolves to the private address \(first); set \"allowPrivateTargets\": true in this entry "
                        + "if the receiver is meant to be on a private network")
            }
            return StartupWarning("webhook target on a private address", [
                "url": WebhookTarget.redacted(endpoint.url), "address": first,
                "detail": "allowPrivateTargets is set for this webhook; never in a multi-tenant setup",
            ])
        }
        if texts.isEmpty {
            return StartupWarning("webhook host does not resolve", [
                "url": WebhookTarget.redacted(endpoint.url), "detail": "deliveries fail and are retried until it resolves",
            ])
        }
        return nil
    }
}
