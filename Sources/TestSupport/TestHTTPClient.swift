public import HTTPKit
internal import NativeTestSupport

/// A response as the test client parsed it off the wire.
public struct TestHTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields in order.
    public var headers: HTTPHeaders
    /// The body (de-chunked).
    public var body: [UInt8]
    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// A blocking raw HTTP/1.1 client over one loopback TCP connection, for server tests: it sends
/// exactly the bytes asked for, so tests can exercise keep-alive, raw targets, chunked bodies,
/// oversized heads and disconnects. Call it through ``BlockingIO/run(_:)`` from async tests so
/// the cooperative thread pool, which the server's handlers need, is never blocked.
public final class TestHTTPClient {
    private let connection: TCPConnection
    private var buffer: [UInt8] = []

    /// Connects to `127.0.0.1:port`.
    public init(port: Int) throws {
        connection = try TCPConnection(port: port)
    }

    /// Sends a request; adds `Host` and, for a body, `Content-Length` (unless `chunked`, which
    /// sends the body as chunks of `chunkSize`).
    public func send(
        _ method: String,
        _ target: String,
        headers: [(String, String)] = [],
        body: [UInt8] = [],
        chunked: Bool = false,
        chunkSize: Int = 64 << 10
    ) throws {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if chunked {
            head += "Transfer-Encoding: chunked\r\n\r\n"
            try connection.write(head)
            var offset = 0
            while offset < body.count {
                let end = min(body.count, offset + chunkSize)
                try connection.write(String(end - offset, radix: 16) + "\r\n")
                try connection.write(body[offset..<end])
                try connection.write("\r\n")
                offset = end
            }
            try connection.write("0\r\n\r\n")
        } else {
            if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
            head += "\r\n"
            try connection.write(Array(head.utf8) + body)
        }
    }

    /// Writes raw bytes.
    public func write(_ bytes: [UInt8]) throws { try connection.write(bytes) }

    /// Reads one response (Content-Length, chunked, or until close).
    public func readResponse(timeoutMilliseconds: Int = 5000) throws -> TestHTTPResponse {
        let headEnd = try readUntil(timeoutMilliseconds: timeoutMilliseconds) { Self.find([13, 10, 13, 10], in: $0) }
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw TestHTTPClientError.malformed(head) }
        var headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.add(name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmingSpaces)
        }
        var body: [UInt8] = []
        if let length = headers["Content-Length"].flatMap({ Int($0) }) {
            _ = try readUntil(timeoutMilliseconds: timeoutMilliseconds) { $0.count >= length ? length : nil }
            body = Array(buffer[..<length])
            buffer.removeFirst(length)
        } else if headers["Transfer-Encoding"]?.lowercased() == "chunked" {
            while true {
                let lineEnd = try readUntil(timeoutMilliseconds: timeoutMilliseconds) { Self.find([13, 10], in: $0) }
                let sizeText = String(decoding: buffer[..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
                guard let size = Int(sizeText.trimmingSpaces, radix: 16) else { throw TestHTTPClientError.malformed("chunk") }
                buffer.removeFirst(lineEnd + 2)
                _ = try readUntil(timeoutMilliseconds: timeoutMilliseconds) { $0.count >= size + 2 ? size : nil }
                body += buffer[..<size]
                buffer.removeFirst(size + 2)
                if size == 0 { break }
            }
        } else {
            while let more = try? connection.read(timeoutMilliseconds: timeoutMilliseconds), !more.isEmpty {
                buffer += more
            }
            body = buffer
            buffer = []
        }
        return TestHTTPResponse(status: status, headers: headers, body: body)
    }

    /// Sends a request and reads its response.
    public func request(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [],
        chunked: Bool = false
    ) throws -> TestHTTPResponse {
        try send(method, target, headers: headers, body: body, chunked: chunked)
        return try readResponse()
    }

    /// Sends a request whose body the server may refuse before it has all arrived (an oversized
    /// upload): a failed write, as when the server answered early and closed, only stops the
    /// sending; then the response is read.
    public func requestAllowingEarlyReply(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8], chunked: Bool
    ) throws -> TestHTTPResponse {
        do {
            try send(method, target, headers: headers, body: body, chunked: chunked)
        } catch is TCPConnectionError {
            // The server stopped reading; its answer is already on the way (or in the buffer).
        }
        return try readResponse()
    }

    /// Whether the server closed the connection (reads end of stream within the timeout).
    public func isClosedByPeer(timeoutMilliseconds: Int = 2000) -> Bool {
        guard buffer.isEmpty else { return false }
        do { return try connection.read(timeoutMilliseconds: timeoutMilliseconds).isEmpty } catch { return false }
    }

    /// Closes the connection.
    public func close() { connection.close() }

    /// One request on a fresh connection.
    public static func request(
        port: Int, _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [],
        chunked: Bool = false
    ) throws -> TestHTTPResponse {
        let client = try TestHTTPClient(port: port)
        defer { client.close() }
        return try client.request(method, target, headers: headers, body: body, chunked: chunked)
    }

    private func readUntil(timeoutMilliseconds: Int, _ done: ([UInt8]) -> Int?) throws -> Int {
        while true {
            if let index = done(buffer) { return index }
            let more = try connection.read(timeoutMilliseconds: timeoutMilliseconds)
            if more.isEmpty { throw TestHTTPClientError.closed }
            buffer += more
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start
        }
        return nil
    }
}

/// Why the test client could not read a response.
public enum TestHTTPClientError: Error, Equatable {
    /// The server closed the connection before a full response.
    case closed
    /// The response did not parse.
    case malformed(String)
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
