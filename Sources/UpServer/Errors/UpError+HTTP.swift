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
        code == .insufficientStorage ? ["Retry-After": String(Self.retryAfterSeconds)] : [:]
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
