public import HTTPKit
public import UpCore

/// The protocol's error table renders itself once, in HTTPKit: `{"error": message}` with the
/// Qiniu status of spec §8.
extension UpError: HTTPResponseError {
    /// The Qiniu status code.
    public var httpStatus: Int { code.status }
    /// The client-facing text (never `detail`).
    public var clientMessage: String { code.message }
    /// `Retry-After` on `503 insufficient storage`; nothing on other rows.
    public var responseHeaders: HTTPHeaders {
        code == .insufficientStorage || code == .storeUnavailable ? ["Retry-After": String(Self.retryAfterSeconds)] : [:]
    }

    /// The `Retry-After` of `503 insufficient storage`: long enough that a client with one up
    /// host does not hammer a full disk, short enough that it is back within seconds of space
    /// being freed (up-cli waits this long, capped by its own maximum; Qiniu's SDKs ignore it
    /// and use their own backoff).
    public static let retryAfterSeconds = 5

    /// `503 insufficient storage` for a write the disk had no room for; `detail` (for logs)
    /// names the call and the file.
    public static func insufficientStorage(_ detail: String) -> UpError {
        UpError(.insufficientStorage, detail: detail)
    }
}

// Rows up-server adds to the table, so that every status it can send is one (issue 9 §4). The
// first five are answered by HTTPKit itself, outside any handler, with exactly these statuses and
// texts (`UpErrorTableTests` holds them to it); the others are up-server's own.
extension UpError.Code {
    /// 404: no route has this path (HTTPKit's answer).
    public static let routeNotFound = Self(status: 404, message: "not found", name: "route_not_found")
    /// 405: the path exists for other methods (HTTPKit's answer, with `Allow`; also a v2 path whose
    /// resource lacks the method, §5).
    public static let methodNotAllowed = Self(status: 405, message: "method not allowed", name: "method_not_allowed")
    /// 413: the body is larger than its route accepts (HTTPKit: "request body exceeds <n> bytes").
    public static let bodyTooLarge = Self(status: 413, message: "request body exceeds the limit", name: "body_too_large")
    /// 503: the handler ran past its deadline (HTTPKit's answer).
    public static let handlerTimedOut = Self(status: 503, message: "handler timed out", name: "handler_timed_out")
    /// 400: the client went away in the middle of the body (HTTPKit logs the request; nobody reads it).
    public static let bodyIncomplete = Self(status: 400, message: "request body incomplete", name: "body_incomplete")
    /// 503: `GET /healthz` while the index does not answer.
    public static let indexUnavailable = Self(status: 503, message: "index unavailable", name: "index_unavailable")
    /// 400: a form upload whose Content-Type is not multipart/form-data with a boundary (§6).
    public static let notMultipartForm = Self(
        status: 400, message: "Content-Type must be multipart/form-data with a boundary", name: "not_multipart_form")
    /// 400: a form upload with a second `file` part (§6).
    public static let secondFilePart = Self(
        status: 400, message: "more than one file part in multipart", name: "second_file_part")
    /// 400: a form upload whose `file` part precedes its `token` field (§6, [ambiguous]).
    public static let fileBeforeToken = Self(
        status: 400, message: "the token field must come before the file field in multipart", name: "file_before_token")
    /// 612 for a missing object, with the text Qiniu's rs answers `stat` with (§8: 612
    /// "resource missing").
    public static let noSuchFile = Self(status: 612, message: "no such file or directory", name: "no_such_file")
    /// 416: a download's `Range` starts past the object's end (sent with `Content-Range: bytes */<size>`).
    public static let rangeNotSatisfiable = Self(
        status: 416, message: "requested range not satisfiable", name: "range_not_satisfiable")
    /// 640: a listing `marker` this server did not issue (§8 "bad list marker").
    public static let badListMarker = Self(status: 640, message: "invalid marker", name: "bad_list_marker")
    /// 612: `POST /admin/outbox/<id>/requeue` for an id that is not a dead entry.
    public static let noSuchDeadEntry = Self(
        status: 612, message: "no such dead outbox entry", name: "no_such_dead_entry")
    /// 599 to a bput taken over by a newer request for the same block: its client gave up on it
    /// (the newer request is typically its retry), so it is no server failure. Same status and
    /// text as ``internalError`` (the SDKs retry 599); a name of its own keeps it out of the error
    /// log and apart in the metrics.
    public static let chunkSuperseded = Self(status: 599, message: "server operation failed", name: "chunk_superseded")

    /// Every row up-server can answer with: UpCore's and the ones above.
    public static let upServerRows: [UpError.Code] = all + [
        routeNotFound, methodNotAllowed, bodyTooLarge, handlerTimedOut, bodyIncomplete, indexUnavailable,
        notMultipartForm, secondFilePart, fileBeforeToken, noSuchFile, rangeNotSatisfiable, badListMarker, noSuchDeadEntry,
        chunkSuperseded, storeUnavailable,
    ]
}
