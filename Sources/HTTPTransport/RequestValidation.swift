import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What ``URLSessionTransport`` refuses before sending, and the `URLRequest` it sends otherwise.
/// The same requests ``CurlTransport`` refuses (its checks live in NativeCurl): URLSession would
/// otherwise percent-encode a bad URL, or send a header it was told to, where libcurl refuses.
enum RequestValidation {
    /// `request` as a `URLRequest`, or ``TransportError/Kind/invalidRequest`` saying what is wrong.
    static func urlRequest(for request: TransportRequest, hasStreamedBody: Bool) throws(TransportError) -> URLRequest {
        guard !request.method.isEmpty, request.method.utf8.allSatisfy(isTokenByte) else {
            throw invalid("method \(String(reflecting: request.method)) is not an HTTP token")
        }
        guard request.url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), let url = URL(string: request.url),
            let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host?.isEmpty == false
        else {
            throw invalid("URL \(String(reflecting: request.url)) is not an absolute http(s) URL")
        }
        for (name, value) in request.headers {
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else { throw invalid("header name \(String(reflecting: name))") }
            guard !value.utf8.contains(where: { $0 == 0 || $0 == 0x0A || $0 == 0x0D }) else {
                throw invalid("header \(name) has CR, LF or NUL in its value")
            }
        }
        if case .file(_, let offset, let length) = request.body {
            guard offset >= 0, length >= 0, !offset.addingReportingOverflow(length).overflow else {
                throw invalid("file region \(offset)+\(length)")
            }
        }
        if request.method == "HEAD", request.body.count > 0 || hasStreamedBody { throw invalid("HEAD with a body") }
        guard request.maxSendBytesPerSecond <= 0 else {
            throw invalid("maxSendBytesPerSecond: URLSession cannot pace a body (use CurlTransport)")
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers where name.lowercased() != "content-length" {
            urlRequest.addValue(value, forHTTPHeaderField: name)
        }
        return urlRequest
    }

    private static func invalid(_ what: String) -> TransportError { TransportError(.invalidRequest, "refused: \(what)") }

    /// RFC 9110 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
