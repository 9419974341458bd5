internal import CMicroHTTPD
internal import NativeOS
#if canImport(Glibc)
import Glibc
#endif

/// Why libmicrohttpd could not listen on an address. `MHD_start_daemon` only returns NULL (its
/// reason goes to a log callback as text), so after a failure the same bind is tried once more
/// here, with the options MHD uses (`SO_REUSEADDR`), to learn the `errno`: "address already in
/// use", "permission denied", "cannot assign requested address".
enum ListenProbe {
    /// The reason `host:port` cannot be listened on, in words for a one-line message.
    static func reason(host: String, port: Int) -> String {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(clamping: port)).bigEndian
        guard unsafe inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return "not an IPv4 address" }
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return SystemError.message(errno) }
        defer { close(descriptor) }
        var one: Int32 = 1
        _ = unsafe setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = unsafe withUnsafePointer(to: &address) { pointer in
            unsafe pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                unsafe bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { return SystemError.message(errno) }
        guard listen(descriptor, 1) == 0 else { return SystemError.message(errno) }
        return "libmicrohttpd could not start (the address itself is free)"
    }
}
