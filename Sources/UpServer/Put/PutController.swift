import HTTPKit

/// Routes of the single-request v1 upload (qiniu-protocol.md §4.5): `/put/` (raw body, streamed)
/// and `/putb64/` (base64 body, collected).
struct PutController: Sendable {
    /// Largest `/put/` body. The policy's `fsizeLimit` applies on top.
    static let maxPutBody = 1 << 30
    /// Largest `/putb64/` body (collected, then decoded): 16 MiB of text, 12 MiB of file.
    static let maxPutB64Body = 16 * 1024 * 1024

    let put: PutHandler

    /// Registers the routes.
    func register(on router: inout UpRouter) {
        router.post("/put/*", body: .stream(maxBytes: Self.maxPutBody)) { request, _ in try await put.handle(request) }
        router.post("/putb64/*", body: .collect(maxBytes: Self.maxPutB64Body)) { request, _ in
            try await put.handle(request)
        }
    }
}
