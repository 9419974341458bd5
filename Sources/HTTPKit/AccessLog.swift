import Basics

/// The one access-log line per request, shared by the server and in-process routing: path
/// without query (queries may carry tokens), then whatever the handler attached.
enum AccessLog {
    /// Whether the line always has a field `name`; a handler's field with such a name is dropped.
    static func isReserved(_ name: String) -> Bool {
        switch name {
        case "ts", "level", "logger", "msg", "method", "path", "status", "bytes", "duration_ms", "reqid", "remote": true
        default: false
        }
    }

    static func write(
        to logger: Logger, method: HTTPMethod, path: String, status: Int, bytes: Int, seconds: Double,
        requestID: String, remoteAddress: String, extra: AccessLogFields?
    ) {
        guard logger.minimumLevel <= .info else { return }
        var more = extra?.all ?? []
        if more.contains(where: { isReserved($0.key) }) {
            more.removeAll { isReserved($0.key) }
        }
        logger.log(.info, "request", [
            "method": .string(method.rawValue),
            "path": .string(path),
            "status": .int(Int64(status)),
            "bytes": .int(Int64(bytes)),
            "duration_ms": .double((seconds * 1_000_000).rounded() / 1000),
            "reqid": .string(requestID),
            "remote": .string(remoteAddress),
        ], more: more)
    }

    /// `duration` in seconds.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
