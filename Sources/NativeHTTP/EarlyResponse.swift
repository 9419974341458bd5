internal import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

/// Writing a response on a connection's socket while its request body is still arriving.
///
/// libmicrohttpd 0.9.75 cannot do it: "The response cannot be queued when this callback is
/// called to process the client upload data" (microhttpd.h, MHD_AccessHandlerCallback), and an
/// answer queued only once the body has ended never comes for a body larger than the discard
/// limit, whose connection is closed first: a client sending 10 MB chunked to a 16 KiB route got
/// an empty reply (issue 10, item 5). A refusal by `Content-Length` does not need this: it is
/// queued at the head, before any body byte.
///
/// So the exchange writes the (small, in-memory) answer itself, on the connection's worker
/// thread inside the upload callback, where MHD is not writing: status line, the response's
/// headers, `Content-Length` and `Connection: close`, then the body; then it half-closes the
/// sending side, so the client sees the end of the answer while MHD goes on discarding what it
/// still sends (a client such as curl stops sending when it sees an early answer).
enum EarlyResponse {
    /// The bytes of `response` as HTTP/1.1, or nil for a file body (never an early answer).
    static func serialize(_ response: RawResponse) -> [UInt8]? {
        guard case .bytes(let body) = response.body else { return nil }
        let reason = unsafe MHD_get_reason_phrase_for(UInt32(clamping: response.status))
            .map { unsafe String(cString: $0) } ?? ""
        var head = "HTTP/1.1 \(response.status) \(reason)\r\n"
        for (name, value) in response.headers {
            // As MHD does for queued responses: a name or value with CR or LF is dropped.
            guard !name.utf8.contains(where: { $0 == 13 || $0 == 10 }),
                  !value.utf8.contains(where: { $0 == 13 || $0 == 10 }) else { continue }
            let lowered = name.lowercased()
            guard lowered != "content-length", lowered != "connection" else { continue }
            head += "\(name): \(value)\r\n"
        }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + body
    }

    /// Writes `response` on `descriptor` (non-blocking: waits at most about a second in total for
    /// room), then shuts the sending side down. Returns whether every byte was written.
    static func write(_ response: RawResponse, to descriptor: Int32) -> Bool {
        guard descriptor >= 0, let bytes = serialize(response) else { return false }
        var sent = 0
        var waits = 0
        while sent < bytes.count {
            let count = unsafe bytes.withUnsafeBytes { buffer in
                unsafe send(descriptor, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                sent += count
                continue
            }
            guard count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR, waits < 10 else { return false }
            waits += 1
            var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            _ = unsafe poll(&poller, 1, 100)
        }
        _ = shutdown(descriptor, Int32(SHUT_WR))
        return true
    }
}
