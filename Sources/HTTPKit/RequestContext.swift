public import Basics
import Synchronization

/// What a handler receives besides the request.
public struct RequestContext: Sendable {
    /// The request id (also in `X-Reqid`).
    public var requestID: String
    /// The server's logger; include `reqid` in fields you log.
    public var logger: Logger
    /// The matched route pattern, e.g. `"/v1/uploads/:id"`.
    public var route: String
    /// Fields added to this request's access-log line (see ``addLogFields(_:)``).
    public let logFields: AccessLogFields

    /// The context of the request whose handler is running, for code deep in a handler's call
    /// tree that wants to add log fields (e.g. the upload token's trace id) without every layer
    /// passing the context down. Set by the server around each handler call.
    @TaskLocal public static var current: RequestContext?

    /// Creates a context (the server does this; tests may too).
    public init(requestID: String, logger: Logger, route: String) {
        self.requestID = requestID
        self.logger = logger
        self.route = route
        self.logFields = AccessLogFields()
    }

    /// Adds `fields` to the one access-log line the server writes for this request, after its
    /// own (`method`, `path`, `status`, …; a field reusing one of those names is dropped). Use it
    /// instead of a second line per request: what was decided and for whom. Fields added before a
    /// handler throws are kept. Never pass secrets.
    public func addLogFields(_ fields: KeyValuePairs<String, Logger.Value>) {
        logFields.add(fields)
    }
}

/// The fields a handler attached to its request's access-log line; shared by the copies of one
/// ``RequestContext``.
public final class AccessLogFields: Sendable {
    private let fields = Mutex<[(key: String, value: Logger.Value)]>([])

    init() {}

    func add(_ more: KeyValuePairs<String, Logger.Value>) {
        fields.withLock { list in
            // Room for a handler's usual few calls at once: appending one by one regrew it
            // three times for a token request's seven fields.
            if list.capacity == 0 { list.reserveCapacity(max(8, more.count)) }
            for (key, value) in more { list.append((key, value)) }
        }
    }

    /// The fields in the order they were added.
    public var all: [(key: String, value: Logger.Value)] { fields.withLock { $0 } }
}
