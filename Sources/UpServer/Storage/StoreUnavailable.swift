import NativePostgres
import ObjectStorage
public import UpCore

/// A shared store that does not answer — the PostgreSQL index unreachable (or every pooled
/// connection busy past the acquire timeout), the S3 blob store down — becomes ONE error:
/// `UpError(.storeUnavailable)`, `503 {"error":"store unavailable"}` with `Retry-After`. The call
/// that failed acknowledged nothing (a transaction whose COMMIT was not confirmed is not
/// reported as done; a blob the store did not confirm is not indexed), so the client sends the
/// same request again; a repeated mkfile finds the first one's completion if it did commit.
enum StoreUnavailable {
    /// Whether `error` says a store could not be reached.
    static func isUnavailable(_ error: any Error) -> Bool {
        switch error {
        case let error as PostgresError:
            return [.connection, .poolTimeout, .poolClosed, .statementTimeout].contains(error.code)
        case let error as S3Error:
            return error.isRetryable
        case let error as UpError:
            return error.code == .storeUnavailable
        default:
            return false
        }
    }
}

extension UpError.Code {
    /// 503: the index database or the blob store does not answer (issue 12 §2); retried by every
    /// SDK (spec §8: ≥ 500 is retryable), with `Retry-After`.
    public static let storeUnavailable = Self(status: 503, message: "store unavailable", name: "store_unavailable")
}
