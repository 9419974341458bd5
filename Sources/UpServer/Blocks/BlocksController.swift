import HTTPKit
import UpCore

/// Routes of the v1 resumable upload (qiniu-protocol.md §4.1–§4.4): `mkblk`, `bput`, `mkfile`
/// and the legacy `rs-mkfile`.
///
/// Routes end in `*` so the UpCore wire parsers see the raw path and own every path rule
/// (positional pairs, empty segments, percent-decoding per segment; a bad path is 400).
struct BlocksController: Sendable {
    /// Largest mkfile body: the ctx list. A ctx is ~80 characters, so 4 MiB lists ~50,000
    /// blocks, a 200 GiB file.
    static let maxMkfileBody = 4 * 1024 * 1024
    /// Handler deadline of mkblk and bput: the chunk (up to a 4 MiB block) must arrive within it.
    /// The server default of 30 s cut off a whole-block mkblk, as the official Python SDK and
    /// up-cli send it, on any link slower than ~140 KB/s, and every retry again, so such an
    /// upload never finished. 10 minutes is ~7 KB/s for a full block; the form route allows 30
    /// minutes and a v2 part an hour, for their larger bodies. It is also the longest a client
    /// trickling a chunk holds its request open.
    static let chunkTimeout = Duration.seconds(10 * 60)

    let mkblk: MkblkHandler
    let bput: BputHandler
    let mkfile: MkfileHandler

    /// Registers the routes.
    func register(on router: inout UpRouter) {
        // §4.1/§4.2: a chunk is at most one block, 4 MiB; more is a 413 from HTTPKit.
        router.post("/mkblk/*", body: .stream(maxBytes: QiniuBlock.size), timeout: Self.chunkTimeout) { request, _ in
            try await mkblk.handle(request)
        }
        router.post("/bput/*", body: .stream(maxBytes: QiniuBlock.size), timeout: Self.chunkTimeout) { request, _ in
            try await bput.handle(request)
        }
        router.post("/mkfile/*", body: .collect(maxBytes: Self.maxMkfileBody)) { request, _ in
            try await mkfile.handleMkfile(request)
        }
        router.post("/rs-mkfile/*", body: .collect(maxBytes: Self.maxMkfileBody)) { request, _ in
            try await mkfile.handleRsMkfile(request)
        }
    }
}
