import HTTPKit
import NativeCrypto
import UpCore

/// Small request helpers shared by the v1 handlers.
enum V1Request {
    /// The declared `Content-Length`, when present and a decimal number (lets a handler refuse an
    /// oversized chunk before reading it; the streamed count is still checked).
    static func contentLength(_ request: Request) -> Int64? {
        guard let text = request.headers["Content-Length"], !text.isEmpty, text.utf8.count <= 18,
            text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { return nil }
        return Int64(text)
    }

    /// The ctx's block id: the blob's 16 random bytes.
    static func blockID(of blob: BlobID) -> [UInt8] { Hex.decode(blob.hex) ?? [] }

    /// The blob a verified ctx names; `nil` if its id is not a blob id (cannot happen for a ctx
    /// this server signed, but the id is still only bytes).
    static func blob(of context: BlockContext) -> BlobID? {
        guard context.blockID.count == BlobID.byteCount else { return nil }
        return BlobID(hex: Hex.encode(context.blockID))
    }

    /// `CommitResult` → response: 200 with the reply JSON as is (returnBody, default, or the
    /// callback's answer, §3.4/§3.6), or `579 {"error": reason}` (stored, callback failed).
    static func response(for result: CommitResult) -> Response {
        switch result {
        case .stored(_, let reply):
            return Response.json(raw: reply, headers: ["Cache-Control": "no-store"])
        case .callbackFailed(_, let reason):
            return Response.error(status: 579, message: reason, headers: ["Cache-Control": "no-store"])
        }
    }
}
