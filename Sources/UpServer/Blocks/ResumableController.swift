import Basics
import HTTPKit
import UpCore

/// Routes of the v1 resumable upload (qiniu-protocol.md §4): `mkblk`, `bput`, `mkfile`, the
/// legacy `rs-mkfile`, and the single-request `put` / `putb64` (§4.5).
///
/// Routes end in `*` so the UpCore wire parsers see the raw path and own every path rule
/// (positional pairs, empty segments, percent-decoding per segment; a bad path is 400).
struct ResumableController: Sendable {
    let services: UpServices

    /// Largest mkfile body: the ctx list. A ctx is ~80 characters, so 4 MiB lists ~50,000
    /// blocks, a 200 GiB file.
    static let maxMkfileBody = 4 * 1024 * 1024
    /// Largest `/put/` body. The policy's `fsizeLimit` applies on top.
    static let maxPutBody = 1 << 30
    /// Largest `/putb64/` body (collected, then decoded): 16 MiB of text, 12 MiB of file.
    static let maxPutB64Body = 16 * 1024 * 1024

    /// Registers the routes.
    func register(on router: inout Router) {
        let mkblk = MkblkHandler(services: services)
        let bput = BputHandler(services: services)
        let mkfile = MkfileHandler(services: services)
        let put = PutHandler(services: services)
        let services = self.services
        // §4.1/§4.2: a chunk is at most one block, 4 MiB; more is a 413 from HTTPKit.
        router.post("/mkblk/*", body: .stream(maxBytes: BlockContext.maxBlockSize)) { request, context in
            try await Self.run(services, context) { try await mkblk.handle(request) }
        }
        router.post("/bput/*", body: .stream(maxBytes: BlockContext.maxBlockSize)) { request, context in
            try await Self.run(services, context) { try await bput.handle(request) }
        }
        router.post("/mkfile/*", body: .collect(maxBytes: Self.maxMkfileBody)) { request, context in
            try await Self.run(services, context) { try await mkfile.handleMkfile(request) }
        }
        router.post("/rs-mkfile/*", body: .collect(maxBytes: Self.maxMkfileBody)) { request, context in
            try await Self.run(services, context) { try await mkfile.handleRsMkfile(request) }
        }
        router.post("/put/*", body: .stream(maxBytes: Self.maxPutBody)) { request, context in
            try await Self.run(services, context) { try await put.handle(request) }
        }
        router.post("/putb64/*", body: .collect(maxBytes: Self.maxPutB64Body)) { request, context in
            try await Self.run(services, context) { try await put.handle(request) }
        }
    }

    /// Runs a handler; an error that is not a protocol error (store or index failure) is logged
    /// and answered `599 server operation failed`, the §8 code the SDKs treat as retryable. A
    /// full disk arrives here already as `503 insufficient storage` (`InsufficientStorage`).
    private static func run(
        _ services: UpServices, _ context: RequestContext, _ body: () async throws -> Response
    ) async throws -> Response {
        do {
            return try await body()
        } catch let error as any HTTPResponseError {
            if let upError = error as? UpError, upError.code == .internalError {
                context.logger.error("v1 request failed", ["reqid": .string(context.requestID), "error": .string(upError.description)])
            } else if let upError = error as? UpError, upError.code == .chunkSuperseded {
                context.logger.info("v1 chunk superseded", ["reqid": .string(context.requestID), "detail": .string(upError.detail)])
            }
            if let upError = error as? UpError, upError.code == .insufficientStorage {
                context.logger.warning("v1 request refused: disk full", ["reqid": .string(context.requestID), "error": .string(upError.description)])
            }
            throw error
        } catch let error where RequestBodyStream.isDisconnect(error) || error is CancellationError {
            // The client went away mid-body, or the handler timed out (HTTPKit has answered 503):
            // no server failure (HTTPKit logs either), so it must not become a logged 599.
            throw error
        } catch {
            context.logger.error(
                "v1 request failed", ["reqid": .string(context.requestID), "error": .string(String(describing: error))])
            throw UpError(.internalError, detail: String(describing: error))
        }
    }
}
