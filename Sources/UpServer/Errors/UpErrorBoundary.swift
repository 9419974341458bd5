import Basics
import HTTPKit
import UpCore

/// The one error boundary of up-server (issue 9 §4): every route's handler runs inside
/// ``wrap(_:)`` (applied once, by `UpRouter`), so the same failure gives the same documented
/// status, JSON and log line on every route.
///
/// - A protocol error (`UpError`) is answered as its row says: `{"error": <message>}` with the
///   row's status (`UpError+HTTP.swift` lists every row up-server can send).
/// - A full disk, whichever layer noticed it, is `503 insufficient storage` with `Retry-After`.
/// - A shared store that does not answer (PostgreSQL, S3) is `503 store unavailable` with
///   `Retry-After` (`StoreUnavailable`).
/// - The client going away mid-body, or the handler cancelled at its deadline, is passed through
///   untouched: HTTPKit answers and logs those itself, and they are no server failure.
/// - Anything else is a failure of ours: logged at error level and answered
///   `599 {"error":"server operation failed"}` — Qiniu's code for a server error, which every
///   SDK retries (qiniu-protocol.md §8) — on every route, upload or not, rather than 500.
///
/// Log levels: a superseded chunk (its client gave up on it) is info, a full disk a warning, an
/// unexpected failure an error; an answer the client caused is not logged here (the access log
/// has its status).
enum UpErrorBoundary {
    /// `handler` inside the boundary.
    static func wrap(_ handler: @escaping HTTPHandler) -> HTTPHandler {
        { request, context in
            do {
                return try await handler(request, context)
            } catch {
                throw translate(error, context: context)
            }
        }
    }

    /// What `error` is answered as, logging it by the rules above.
    static func translate(_ error: any Error, context: RequestContext) -> any Error {
        if RequestBodyStream.isDisconnect(error) || error is CancellationError { return error }
        let upError: UpError
        switch error {
        case let known as UpError:
            upError = known
        case let known as any HTTPResponseError:
            return known  // HTTPKit's own answers (413 from a body stream): rows of the table too
        default:
            upError =
                InsufficientStorage.isNoSpace(error)
                ? UpError.insufficientStorage("\(error)")
                : StoreUnavailable.isUnavailable(error)
                    ? UpError(.storeUnavailable, detail: "\(error)") : UpError(.internalError, detail: String(describing: error))
        }
        let fields: KeyValuePairs<String, Logger.Value> = [
            "reqid": .string(context.requestID), "route": .string(context.route), "error": .string(upError.description),
        ]
        switch upError.code {
        case .internalError: context.logger.error("request failed", fields)
        case .insufficientStorage: context.logger.warning("request refused: disk full", fields)
        case .storeUnavailable: context.logger.warning("request refused: store unavailable", fields)
        case .chunkSuperseded: context.logger.info("chunk superseded by a newer request", fields)
        default: break
        }
        return upError
    }
}
