import HTTPTransport
import UpCore

/// Everything the protocol drivers of one upload call share.
struct UploadJob: Sendable {
    /// How a driver ends: the final reply and the etag of the bytes it sent.
    struct Completion: Sendable {
        /// The reply of mkfile / complete / the form POST.
        var response: TransportResponse
        /// The etag of the bytes sent (§7), computed as they were sent.
        var localEtag: String
        /// The reply is a 579: stored, but the app's callback failed (§3.4).
        var callbackFailed: Bool
    }

    /// The caller's request.
    let request: UploadRequest
    /// The file's size and identity when the call began.
    let facts: FileFacts
    /// The file, open for the call.
    let source: SourceFile
    /// Sends requests to the up hosts.
    let sender: RequestSender
    /// Progress to the caller.
    let reporter: ProgressReporter
    /// The checkpoint file, when the request has one.
    let store: CheckpointStore?
    /// The checkpoint to write, without the per-block / per-part progress.
    let template: Checkpoint
    /// The token's bucket (v2 paths).
    let bucket: String
    /// Per-request timeout.
    let timeout: Duration
    /// Pause / abort.
    let control: UploadControl
    /// Notices a change of the file during the upload.
    let watch: FileWatch

    /// Writes the checkpoint with `update` applied (no-op without a checkpoint path).
    func save(_ update: (inout Checkpoint) -> Void) throws(UploadError) {
        guard let store else { return }
        var checkpoint = template
        update(&checkpoint)
        try store.save(checkpoint)
    }

    /// A request for `path` on `host` with the UpToken header and a body; its bytes are reported
    /// as progress under `progressID`.
    func upRequest(
        method: String, host: String, path: String, token: String, contentType: String?,
        extraHeaders: [(String, String)] = [], body: TransportBody, progressID: Int? = nil
    ) -> TransportRequest {
        var headers = [("Authorization", "UpToken " + token)]
        if let contentType { headers.append(("Content-Type", contentType)) }
        headers += extraHeaders
        let reporter = self.reporter
        return TransportRequest(
            method: method, url: host + path, headers: headers, body: body, timeout: timeout,
            progress: progressID.map { id in { @Sendable bytes in reporter.sent(id, bytes: bytes) } })
    }

    /// The parsed JSON object of a 2xx reply, or a server error naming `what`.
    static func json(_ response: TransportResponse, _ what: String) throws(UploadError) -> JSONValue {
        guard let json = try? JSONValue.parse(response.body), case .object = json else {
            throw UploadError(
                .server(status: response.status), "\(what): reply is not a JSON object", requestID: response[header: "X-Reqid"])
        }
        return json
    }
}
