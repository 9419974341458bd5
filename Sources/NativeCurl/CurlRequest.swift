/// One HTTP request for ``CurlMulti``: plain Swift values, validated before libcurl sees them.
public struct CurlRequest: Sendable {
    /// Where the request body comes from.
    public enum Body: Sendable, Equatable {
        /// No body (`Content-Length: 0` for POST and PUT).
        case none
        /// Bytes in memory.
        case bytes([UInt8])
        /// `length` bytes of the file at `path` starting at `offset`, read with `pread` as libcurl
        /// asks for them, so a 4 MiB chunk goes from disk to socket without being loaded whole.
        case file(path: String, offset: Int64, length: Int64)
        /// `length` bytes written into `pipe` by a producer while the request is sent (an upload
        /// chunk relayed as it arrives). Such a body cannot be rewound once sending began.
        case stream(CurlBodyPipe, length: Int64)

        /// The body length in bytes (what `Content-Length` says).
        public var count: Int64 {
            switch self {
            case .none: 0
            case .bytes(let bytes): Int64(bytes.count)
            case .file(_, _, let length): length
            case .stream(_, let length): length
            }
        }
    }

    /// The method, e.g. `"GET"`; any RFC 9110 token is accepted.
    public var method: String
    /// An absolute `http://` or `https://` URL.
    public var url: String
    /// Header fields in order. A `Host` field replaces the one libcurl derives from the URL.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: Body
    /// Time allowed to establish the connection, in milliseconds (at least 1).
    public var connectTimeoutMilliseconds: Int
    /// Time allowed for the whole transfer, queueing for a connection included, in milliseconds
    /// (at least 1).
    public var timeoutMilliseconds: Int
    /// Abort when fewer than this many bytes per second move for ``lowSpeedTimeSeconds``; 0 turns
    /// the check off. Waiting for the server's response counts as no movement.
    public var lowSpeedLimit: Int
    /// The window for ``lowSpeedLimit``, in seconds.
    public var lowSpeedTimeSeconds: Int
    /// The largest response body accepted; a larger one fails with ``CurlError/Code/fileSizeExceeded``.
    public var maxResponseBytes: Int
    /// Called on the transfer thread with the body bytes sent so far, increasing, ending at the
    /// body size on success. Must return quickly.
    public var progress: (@Sendable (Int64) -> Void)?

    /// Creates a request; see each property for its meaning.
    public init(
        method: String,
        url: String,
        headers: [(name: String, value: String)] = [],
        body: Body = .none,
        connectTimeoutMilliseconds: Int = 10_000,
        timeoutMilliseconds: Int = 60_000,
        lowSpeedLimit: Int = 0,
        lowSpeedTimeSeconds: Int = 30,
        maxResponseBytes: Int = 16 << 20,
        progress: (@Sendable (Int64) -> Void)? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
        self.timeoutMilliseconds = timeoutMilliseconds
        self.lowSpeedLimit = lowSpeedLimit
        self.lowSpeedTimeSeconds = lowSpeedTimeSeconds
        self.maxResponseBytes = maxResponseBytes
        self.progress = progress
    }

    /// Why this request cannot be sent, or `nil` if it can. Header injection (CR, LF, NUL) and
    /// strings C would silently truncate are refused here rather than sent.
    func validationFailure() -> String? {
        guard !method.isEmpty, method.utf8.allSatisfy(Self.isTokenByte) else { return "invalid method" }
        guard !url.isEmpty, !url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return "invalid URL" }
        for (name, value) in headers {
            guard !name.isEmpty, name.utf8.allSatisfy(Self.isTokenByte) else { return "invalid header name" }
            guard !value.utf8.contains(where: { $0 == 0 || $0 == 0x0A || $0 == 0x0D }) else {
                return "invalid value for header \(name)"
            }
        }
        if case .file(let path, let offset, let length) = body {
            guard !path.isEmpty, !path.utf8.contains(0) else { return "invalid body file path" }
            guard offset >= 0, length >= 0, offset <= Int64.max - length else { return "invalid body file region" }
        }
        if case .stream(_, let length) = body, length < 0 { return "negative body stream length" }
        // libcurl would read a HEAD response as if a body followed and wait for it until timeout.
        guard method != "HEAD" || body.count == 0 else { return "HEAD cannot have a body" }
        guard maxResponseBytes >= 0 else { return "negative maxResponseBytes" }
        return nil
    }

    /// RFC 9110 §5.6.2 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
