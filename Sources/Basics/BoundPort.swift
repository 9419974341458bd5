import Synchronization

/// The port a server actually bound (known only after it starts), shared with closures built
/// earlier that derive URLs from it — the callback URL in tokens, `host` in up-server replies.
public final class BoundPort: Sendable {
    private let port = Mutex<Int?>(nil)

    /// Creates an empty cell.
    public init() {}

    /// The bound port, or nil before the server started.
    public var value: Int? {
        get { port.withLock { $0 } }
        set { port.withLock { $0 = newValue } }
    }
}
