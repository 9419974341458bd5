import Basics
internal import Foundation
import JSONText
internal import NativeHTTP

/// An HTTP response. `Content-Length` is set by the server; `Content-Type` defaults to
/// `application/json` and `X-Reqid` is always added.
public struct Response: Sendable {
    /// Where the body comes from.
    public enum Body: Sendable {
        /// Bytes in memory.
        case bytes([UInt8])
        /// `length` bytes of an open file from `offset` (downloads). The server takes ownership of
        /// `descriptor` and closes it.
        case file(descriptor: Int32, offset: UInt64, length: UInt64)
        /// Exactly `length` bytes pulled from `source` while they are sent (downloads from a
        /// store that is not a local file), a bounded window ahead of the client. The server
        /// cancels `source` if the body is dropped early; see ``ResponseBodySource`` for a
        /// source that fails mid-body.
        case stream(length: UInt64, source: any ResponseBodySource)

        /// The body length in bytes.
        public var count: Int {
            switch self {
            case .bytes(let bytes): bytes.count
            case .file(_, _, let length), .stream(let length, _): Int(clamping: length)
            }
        }

        /// Releases what a body that will never be sent holds: closes a file body's descriptor,
        /// cancels a streamed body's source.
        func discard() {
            switch self {
            case .bytes: break
            case .file(let descriptor, _, _): HTTPExchange.closeDescriptor(descriptor)
            case .stream(_, let source): source.cancel()
            }
        }
    }

    /// The status code.
    public var status: Int
    /// Header fields in order.
    public var headers: HTTPHeaders
    /// The body.
    public var body: Body

    /// Creates a response with an in-memory body.
    public init(status: Int = 200, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = .bytes(body)
    }

    /// Creates a response with any body.
    public init(status: Int, headers: HTTPHeaders, body: Body) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body bytes if in memory (`[]` for a file or streamed body); handy in tests.
    public var bodyBytes: [UInt8] {
        if case .bytes(let bytes) = body { return bytes }
        return []
    }

    /// `value` encoded as JSON (keys sorted, slashes unescaped) with `application/json`.
    public static func json(status: Int = 200, _ value: some Encodable, headers: HTTPHeaders = [:]) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return json(status: status, raw: Array(try encoder.encode(value)), headers: headers)
    }

    /// Already-encoded JSON bytes with `application/json`.
    public static func json(status: Int = 200, raw: [UInt8], headers: HTTPHeaders = [:]) -> Response {
        var all = headers
        // Room for what the way out adds (request id, CORS, …) without regrowing.
        all.reserveCapacity(headers.count + 5)
        all.set(name: "Content-Type", value: "application/json")
        return Response(status: status, headers: all, body: raw)
    }

    /// `{"error": message}` with `status`, the one error shape of every layer (Qiniu's too).
    public static func error(status: Int, message: String, headers: HTTPHeaders = [:]) -> Response {
        json(status: status, raw: Array(("{\"error\":" + quoted(message) + "}").utf8), headers: headers)
    }

    /// The response for `error`: its own status and message if it is an ``HTTPResponseError``,
    /// otherwise 500 `internal error` (the caller logs the details).
    public static func rendering(_ error: any Error) -> Response {
        if let known = error as? any HTTPResponseError {
            return .error(status: known.httpStatus, message: known.clientMessage, headers: known.responseHeaders)
        }
        return .error(status: 500, message: "internal error")
    }

    private static func quoted(_ text: String) -> String { JSONText.quoted(text) }
}
