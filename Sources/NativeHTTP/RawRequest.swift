/// A request head as libmicrohttpd parsed it, copied out of C memory.
///
/// Nothing here is interpreted beyond what MHD already did: `target` is the request target exactly
/// as the client sent it (not percent-decoded), because QBox callback signatures are computed over
/// those bytes (qiniu-protocol.md, callback authorization).
public struct RawRequest: Sendable {
    /// The method token, e.g. `"POST"`.
    public let method: String
    /// The request target as received, e.g. `"/cb?x=%2F&y"`.
    public let target: String
    /// The protocol version, e.g. `"HTTP/1.1"`.
    public let version: String
    /// Header fields in arrival order, names in their original case.
    public let headers: [(name: String, value: String)]
    /// The client's IP address as text (`"127.0.0.1"`), or `""` if unknown.
    public let remoteAddress: String

    /// Creates a request head (NativeHTTP builds these; tests may too).
    public init(
        method: String,
        target: String,
        version: String,
        headers: [(name: String, value: String)],
        remoteAddress: String
    ) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.remoteAddress = remoteAddress
    }
}
