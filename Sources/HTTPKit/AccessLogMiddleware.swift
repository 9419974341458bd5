public import Basics

/// The one access-log line per request (`msg` `request`, level info): method, path without
/// query (queries may carry tokens), status, bytes, duration, request id, client address, then
/// whatever the handler attached (``RequestContext/addLogFields(_:)``).
public struct AccessLogMiddleware: Middleware {
    /// Creates the middleware.
    public init() {}

    /// Whether the line always has a field `name`; a handler's field with such a name is dropped.
    static func isReserved(_ name: String) -> Bool {
        // By length first: a handler's fields are checked on every request, and most names
        // differ from every reserved one in length alone.
        switch name.utf8.count {
        case 2: name == "ts"
        case 3: name == "msg"
        case 4: name == "path"
        case 5: name == "level" || name == "bytes" || name == "reqid"
        case 6: name == "logger" || name == "method" || name == "status" || name == "remote"
        case 11: name == "duration_ms"
        default: false
        }
    }

    /// Writes the line.
    public func report(_ event: ResponseEvent, logger: Logger) {
        logger.log(.info, "request") { line in
            line.add("method", event.method.rawValue)
            line.add("path", event.path)
            line.add("status", Int64(event.status))
            line.add("bytes", Int64(event.bytes))
            line.add("duration_ms", thousandths: Int64((event.duration * 1_000_000).rounded()))
            line.add("reqid", event.requestID)
            line.add("remote", event.remoteAddress)
            for (key, value) in event.fields where !Self.isReserved(key) { line.add(key, value: value) }
        }
    }
}
