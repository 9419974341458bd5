#if canImport(Glibc)
import Glibc
#endif

/// A tiny blocking IPv4 TCP client for tests: connect, write bytes, read with a timeout, close.
///
/// It exists so tests can speak raw HTTP/1.1 (keep-alive, malformed heads, disconnects mid-body)
/// without an HTTP client library. Test-only, so it lives in a test-only module (production
/// targets never link it); a native one, because it owns a socket.
public final class TCPConnection {
    private var descriptor: Int32

    /// Connects to `host:port` (dotted IPv4, loopback by default).
    public init(host: String = "127.0.0.1", port: Int) throws(TCPConnectionError) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw .failed("socket", errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(clamping: port)).bigEndian
        guard unsafe inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            _ = Glibc.close(fd)
            throw .failed("inet_pton", EINVAL)
        }
        let result = unsafe withUnsafePointer(to: &address) { pointer in
            unsafe pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                unsafe connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            _ = Glibc.close(fd)
            throw .failed("connect", code)
        }
        var one: Int32 = 1
        _ = unsafe setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        descriptor = fd
    }

    /// Takes over an accepted socket (``TCPListener/accept(timeoutMilliseconds:)``).
    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close() }

    /// Writes all of `bytes`, blocking as needed.
    public func write(_ bytes: some Collection<UInt8>) throws(TCPConnectionError) {
        let array = Array(bytes)
        var sent = 0
        while sent < array.count {
            let n = unsafe array.withUnsafeBytes { buffer in
                unsafe send(descriptor, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw .failed("send", errno)
            }
            sent += n
        }
    }

    /// Writes the UTF-8 bytes of `text`.
    public func write(_ text: String) throws(TCPConnectionError) {
        try write(Array(text.utf8))
    }

    /// Reads whatever arrives within `timeoutMilliseconds` (up to `maxBytes`). Returns `[]` at end
    /// of stream; throws ``TCPConnectionError/timedOut`` if nothing arrived in time.
    public func read(maxBytes: Int = 64 << 10, timeoutMilliseconds: Int = 2000) throws(TCPConnectionError) -> [UInt8] {
        try waitReadable(descriptor, timeoutMilliseconds: timeoutMilliseconds)
        var buffer = [UInt8](repeating: 0, count: max(1, maxBytes))
        let n = unsafe buffer.withUnsafeMutableBytes { unsafe recv(descriptor, $0.baseAddress, $0.count, 0) }
        if n < 0 {
            // A reset after the peer closed reads as end of stream for our purposes.
            if errno == ECONNRESET { return [] }
            throw .failed("recv", errno)
        }
        return Array(buffer.prefix(n))
    }

    /// Holds written bytes back (`TCP_CORK`) until ``shutdownWrite()`` or `corked: false`, so
    /// they leave in one segment — with the FIN, when it is a shutdown that releases them.
    public func setCorked(_ corked: Bool) {
        var value: Int32 = corked ? 1 : 0
        _ = unsafe setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_CORK, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Half-closes the sending side (the server sees end of request stream).
    public func shutdownWrite() {
        if descriptor >= 0 { _ = Glibc.shutdown(descriptor, Int32(SHUT_WR)) }
    }

    /// Closes the socket; further calls fail. Idempotent.
    public func close() {
        if descriptor >= 0 {
            _ = Glibc.close(descriptor)
            descriptor = -1
        }
    }
}

/// A tiny blocking IPv4 TCP server for tests: listens on a free loopback port and accepts
/// connections as ``TCPConnection``s, so a test can play a server that sends exactly the bytes it
/// wants (a reply cut inside its head, a reset) to a client under test.
public final class TCPListener {
    private var descriptor: Int32
    /// The bound port.
    public let port: Int

    /// Listens on `127.0.0.1` on a free port.
    public init() throws(TCPConnectionError) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw .failed("socket", errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = unsafe withUnsafeMutablePointer(to: &address) { pointer in
            unsafe pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                unsafe bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            _ = Glibc.close(fd)
            throw .failed("bind/listen", code)
        }
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close() }

    /// The next connection; throws ``TCPConnectionError/timedOut`` if none came in time.
    public func accept(timeoutMilliseconds: Int = 5000) throws(TCPConnectionError) -> TCPConnection {
        try waitReadable(descriptor, timeoutMilliseconds: timeoutMilliseconds)
        let fd = Glibc.accept(descriptor, nil, nil)
        guard fd >= 0 else { throw .failed("accept", errno) }
        return TCPConnection(descriptor: fd)
    }

    /// Stops listening. Idempotent.
    public func close() {
        if descriptor >= 0 {
            _ = Glibc.close(descriptor)
            descriptor = -1
        }
    }
}

/// Waits until `descriptor` is readable (data, end of stream, or a pending connection).
/// - Throws: ``TCPConnectionError/timedOut`` if it is not within `timeoutMilliseconds`.
private func waitReadable(_ descriptor: Int32, timeoutMilliseconds: Int) throws(TCPConnectionError) {
    var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    while true {
        let ready = unsafe poll(&poller, 1, Int32(clamping: timeoutMilliseconds))
        if ready < 0 {
            if errno == EINTR { continue }
            throw .failed("poll", errno)
        }
        if ready == 0 { throw .timedOut }
        return
    }
}

/// A socket call failed.
public enum TCPConnectionError: Error, Sendable, Equatable {
    /// `call` failed with `errno`.
    case failed(_ call: String, _ errno: Int32)
    /// No bytes arrived before the timeout.
    case timedOut
}
