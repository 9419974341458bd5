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
        guard logger.minimumLevel <= .info else { return }
        var more = event.fields
        if more.contains(where: { Self.isReserved($0.key) }) {
            more.removeAll { Self.isReserved($0.key) }
        }
        logger.log(.info, "request", [
            "method": .string(event.method.rawValue),
            "path": .string(event.path),
            "status": .int(Int64(event.status)),
            "bytes": .int(Int64(event.bytes)),
            "duration_ms": .double((event.duration * 1_000_000).rounded() / 1000),
            "reqid": .string(event.requestID),
            "remote": .string(event.remoteAddress),
        ], more: more)
    }
}
