import HTTPKit

/// Routes of the single-request v1 upload (qiniu-protocol.md §4.5): `/put/` (raw body, streamed)
/// and `/putb64/` (base64 body, collected).
struct PutController: Sendable {
    /// Largest `/put/` body. The policy's `fsizeLimit` applies on top.
    static let maxPutBody = 1 << 30
    /// Largest `/putb64/` body (collected, then decoded): 16 MiB of text, 12 MiB of file.
    static let maxPutB64Body = 16 * 1024 * 1024
    /// Handler deadlines, for the time the largest body needs on a slow link (the server's 30 s
    /// cut a `/put/` off at ~35 MB/s for 1 GiB): as the form route's for `/put/`'s 1 GiB, 10
    /// minutes for `/putb64/`'s 16 MiB (~27 KB/s), as for a v1 chunk.
    static let putTimeout = FormUploadController.timeout
    static let putB64Timeout = BlocksController.chunkTimeout

    let put: PutHandler

    /// Registers the routes.
    func register(on router: inout UpRouter) {
        router.post("/put/*", body: .stream(maxBytes: Self.maxPutBody), timeout: Self.putTimeout) { request, _ in
            try await put.handle(request)
        }
        router.post("/putb64/*", body: .collect(maxBytes: Self.maxPutB64Body), timeout: Self.putB64Timeout) { request, _ in
            try await put.handle(request)
        }
    }
}
