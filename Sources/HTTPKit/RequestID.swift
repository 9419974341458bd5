import Basics

/// Request ids for the `X-Reqid` header: echoed from the client when sane, otherwise generated.
public enum RequestID {
    /// The header that carries the id on requests and responses.
    public static let headerName = "X-Reqid"

    /// 16 random URL-safe characters (96 bits). Not a secret, so the system generator suffices.
    public static func generate() -> String { RandomID.urlSafe(count: 16) }

    /// Whether a client-sent id can be echoed: 1–64 characters of `[A-Za-z0-9_.-]`, so it is safe
    /// in logs and headers.
    public static func isAcceptable(_ id: String) -> Bool {
        let utf8 = id.utf8
        guard !utf8.isEmpty, utf8.count <= 64 else { return false }
        return utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                true
            default: false
            }
        }
    }

    /// The id to use for a request carrying `headers`.
    public static func forRequest(_ headers: HTTPHeaders) -> String {
        if let sent = headers[headerName], isAcceptable(sent) { return sent }
        return generate()
    }
}
