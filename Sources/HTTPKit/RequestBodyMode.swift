/// How a route receives its body.
public enum RequestBodyMode: Sendable, Equatable {
    /// The server reads the whole body (at most `maxBytes`, else 413) into ``Request/body``
    /// before calling the handler. For small JSON bodies.
    case collect(maxBytes: Int = 1 << 20)
    /// The handler reads ``Request/bodyStream`` as pieces arrive; more than `maxBytes` → 413.
    /// For uploads.
    case stream(maxBytes: Int)

    /// The limit in bytes.
    public var maxBytes: Int {
        switch self {
        case .collect(let limit), .stream(let limit): limit
        }
    }
}
