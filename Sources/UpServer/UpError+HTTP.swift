public import HTTPKit
public import UpCore

/// The protocol's error table renders itself once, in HTTPKit: `{"error": message}` with the
/// Qiniu status of spec §8.
extension UpError: HTTPResponseError {
    /// The Qiniu status code.
    public var httpStatus: Int { code.status }
    /// The client-facing text (never `detail`).
    public var clientMessage: String { code.message }
}
