/// A complete HTTP response.
public struct TransportResponse: Sendable {
    /// The status code of the final response.
    public var status: Int
    /// Header fields in arrival order, names as the server wrote them.
    public var headers: [(String, String)]
    /// The body.
    public var body: [UInt8]

    /// Creates a response (transports, and test doubles scripting replies).
    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of header `name`, compared case-insensitively (RFC 9110 §5.1), or `nil`.
    public subscript(header name: String) -> String? {
        headers.first { Self.equalNames($0.0, name) }?.1
    }

    /// Every value of header `name`, in order, compared case-insensitively.
    public func values(for name: String) -> [String] {
        headers.filter { Self.equalNames($0.0, name) }.map(\.1)
    }

    /// The body as UTF-8 text (invalid sequences replaced), for JSON and logs.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// ASCII case-insensitive: field names are tokens, so no Unicode folding is needed.
    private static func equalNames(_ a: String, _ b: String) -> Bool {
        let x = a.utf8, y = b.utf8
        guard x.count == y.count else { return false }
        return zip(x, y).allSatisfy { p, q in
            p == q || (p | 0x20 == q | 0x20 && (p | 0x20) >= 0x61 && (p | 0x20) <= 0x7A)
        }
    }
}
