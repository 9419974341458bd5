import Synchronization

/// The port a server actually bound (known only after it starts), shared with closures built
/// earlier that derive URLs from it — the callback URL in tokens, `host` in up-server replies.
///
/// Read on every token request, from every worker thread: an atomic load, not a lock.
public final class BoundPort: Sendable {
    private let port = Atomic<Int>(-1)  // -1: none yet

    /// Creates an empty cell.
    public init() {}

    /// The bound port, or nil before the server started.
    public var value: Int? {
        get {
            let port = port.load(ordering: .acquiring)
            return port < 0 ? nil : port
        }
        set { port.store(newValue.map { max(0, $0) } ?? -1, ordering: .releasing) }
    }
}

extension BoundPort {
    /// A server's externally visible base URL (no trailing slash): `publicBaseURL` when
    /// configured, else `http://<listen host>:<bound port>` — the configured port until the
    /// server has bound one, so `--port 0` and `--port N` both give a URL that works.
    ///
    /// An unspecified listen address (`0.0.0.0`, `::`) is not reachable as such; loopback is the
    /// local answer. IPv6 literals get brackets.
    public func baseURL(publicBaseURL: String?, host: String, configuredPort: Int) -> @Sendable () -> String {
        if let base = publicBaseURL {
            let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
            return { trimmed }
        }
        let reachable = ["0.0.0.0", "::", ""].contains(host) ? "127.0.0.1" : host
        let hostPart = reachable.contains(":") ? "[\(reachable)]" : reachable
        return { "http://\(hostPart):\(self.value ?? configuredPort)" }
    }
}
