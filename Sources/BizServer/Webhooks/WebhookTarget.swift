import Foundation
import ServerShell

/// The SSRF guard of webhook URLs (issue 11 §2): which addresses a receiver may not have unless
/// its entry says `"allowPrivateTargets": true`, and how a URL's host is found and resolved.
///
/// Checked when the configuration is loaded (start-up and reload). A name that later resolves
/// elsewhere (DNS rebinding) is not caught here; that would need the resolved address pinned at
/// connect time.
enum WebhookTarget {
    /// Loopback, private (RFC 1918, RFC 4193, shared CGNAT space), link-local, unspecified,
    /// multicast and reserved blocks, and NAT64 (it reaches IPv4 behind the gateway).
    static let privateBlocks: [CIDRBlock] = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
        "192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4",
        "::/128", "::1/128", "64:ff9b::/96", "fc00::/7", "fe80::/10", "ff00::/8",
    ].map { try! CIDRBlock($0) }  // literals, checked by the tests

    /// Whether `address` is one a public receiver never has.
    static func isPrivate(_ address: IPAddress) -> Bool {
        privateBlocks.contains { $0.contains(address) }
    }

    /// The host of an absolute `http(s)://` URL: an IPv6 literal without its brackets, user
    /// info and port removed; nil when `url` is not `http://` or `https://` with a host.
    static func host(of url: String) -> String? {
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else { return nil }
        let rest = url[url.range(of: "://")!.upperBound...]
        var authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            let host = authority[authority.index(after: authority.startIndex)..<close]
            return host.isEmpty ? nil : String(host)
        }
        let host = authority.prefix { $0 != ":" }
        return host.isEmpty ? nil : String(host)
    }

    /// `url` without its query and fragment (they may carry a token), for logs and listings.
    static func redacted(_ url: String) -> String {
        String(url.prefix { $0 != "?" && $0 != "#" }.prefix(200))
    }

    /// What the system resolver gives for `host` (getaddrinfo, through Foundation), as text.
    static func systemResolve(_ host: String) -> [String] {
        Host(name: host).addresses
    }
}
