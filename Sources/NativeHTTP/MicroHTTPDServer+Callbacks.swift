internal import CMicroHTTPD
import Dispatch

// The C callbacks of MicroHTTPDServer. They are top-level and capture nothing so they convert to
// @convention(c); the daemon's DaemonContext arrives unretained in `cls` (the server keeps it
// alive until MHD_stop_daemon returns), and each request's RequestSlot travels retained in
// `con_cls` from the URI-log callback to MHD_OPTION_NOTIFY_COMPLETED, which releases it.

/// Per-request state owned by MHD's `con_cls`; only touched on the connection's worker thread.
final class RequestSlot {
    let target: String
    var exchange: HTTPExchange?

    init(target: String) { self.target = target }
}

/// Called once per request with the URI before MHD parses or unescapes it: the raw target.
func onURILogged(
    _ cls: UnsafeMutableRawPointer?,
    _ uri: UnsafePointer<CChar>?,
    _ connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    let target = unsafe uri.map { unsafe String(cString: $0) } ?? ""
    return unsafe Unmanaged.passRetained(RequestSlot(target: target)).toOpaque()
}

/// Called for every accepted socket before MHD sets a connection up: refuses (MHD closes the
/// socket at once) while the daemon drains, which is how ``MicroHTTPDServer/stopAccepting()``
/// stops taking connections without `MHD_quiesce_daemon`.
func onAcceptPolicy(
    _ cls: UnsafeMutableRawPointer?,
    _ address: UnsafePointer<sockaddr>?,
    _ length: socklen_t
) -> MHD_Result {
    guard let cls = unsafe cls else { return .YES }
    let context = unsafe Unmanaged<DaemonContext>.fromOpaque(cls).takeUnretainedValue()
    return context.isDraining ? .NO : .YES
}

func onAccess(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?,
    _ version: UnsafePointer<CChar>?,
    _ uploadData: UnsafePointer<CChar>?,
    _ uploadDataSize: UnsafeMutablePointer<Int>?,
    _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls = unsafe cls, let connection = unsafe connection,
          let requestContext = unsafe requestContext, let uploadDataSize = unsafe uploadDataSize
    else { return .NO }
    let context = unsafe Unmanaged<DaemonContext>.fromOpaque(cls).takeUnretainedValue()
    let slot: RequestSlot
    if let raw = unsafe requestContext.pointee {
        slot = unsafe Unmanaged<RequestSlot>.fromOpaque(raw).takeUnretainedValue()
    } else {
        // The URI-log callback always runs first; this is only a fallback (decoded path).
        slot = RequestSlot(target: unsafe url.map { unsafe String(cString: $0) } ?? "/")
        unsafe requestContext.pointee = unsafe Unmanaged.passRetained(slot).toOpaque()
    }

    guard let exchange = slot.exchange else {
        // First call: the head is complete, no body has been read yet.
        let request = RawRequest(
            method: unsafe method.map { unsafe String(cString: $0) } ?? "",
            target: slot.target,
            version: unsafe version.map { unsafe String(cString: $0) } ?? "",
            headers: unsafe requestHeaders(connection),
            remoteAddress: unsafe clientAddress(connection)
        )
        let exchange = unsafe HTTPExchange(
            request: request, connection: ConnectionHandle(pointer: connection), buffering: context.buffering
        )
        slot.exchange = exchange
        context.watchdog.headComplete(UInt(bitPattern: Int(bitPattern: connection)), exchange: exchange)
        if let stopping = context.register(exchange) {
            // The daemon is stopping: answer at once and start no handler, so this connection is
            // never suspended. A body still arriving is discarded like any early answer's.
            exchange.respond(stopping)
        } else {
            context.handler(exchange)
        }
        if let response = exchange.takeResponse(suspendIfNotReady: false) {
            return unsafe queue(response, of: exchange, on: connection, context: context)
        }
        return .YES
    }

    let size = unsafe uploadDataSize.pointee
    if size > 0 {
        // Copy out of MHD's read buffer now; it is reused as soon as we return.
        let piece = unsafe uploadData.map { unsafe [UInt8](UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
        unsafe uploadDataSize.pointee = 0
        return exchange.receive(piece) ? .YES : .NO
    }

    // Final call (body complete), or MHD calling again: at once when the first final call
    // queued nothing, or after a resume.
    let first = exchange.finishBody()
    // Answered while the body arrived (EarlyResponse): nothing left to queue; close.
    if exchange.wasAnsweredEarly { return .NO }
    // Not parked on the first final call: MHD leaves a connection parked by a callback with the
    // poll state it had before the call ("read"), and on resume reads first; a client that
    // half-closed after its body then reads as gone, and MHD closes the connection unanswered
    // (0.9.75). By the next call, which MHD makes in its next loop turn (a connection waiting for
    // its response stays on the ready list), the state says "wait", and a resume goes straight
    // to this callback. A handler that answers in between is not parked at all.
    if let response = exchange.takeResponse(suspendIfNotReady: !first) {
        return unsafe queue(response, of: exchange, on: connection, context: context)
    }
    return .YES
}


func onRequestCompleted(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ termination: MHD_RequestTerminationCode
) {
    guard let cls = unsafe cls else { return }
    let context = unsafe Unmanaged<DaemonContext>.fromOpaque(cls).takeUnretainedValue()
    if let connection = unsafe connection {
        context.watchdog.requestEnded(
            UInt(bitPattern: Int(bitPattern: connection)), now: DispatchTime.now().uptimeNanoseconds)
    }
    guard let requestContext = unsafe requestContext, let raw = unsafe requestContext.pointee else { return }
    unsafe requestContext.pointee = nil
    let slot = unsafe Unmanaged<RequestSlot>.fromOpaque(raw).takeRetainedValue()
    if let exchange = slot.exchange {
        exchange.connectionClosed()
        context.unregister(exchange)
    }
}


/// A connection was accepted or is being closed (its socket is still open during the call).
func onConnectionNotified(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ code: MHD_ConnectionNotificationCode
) {
    guard let cls = unsafe cls, let connection = unsafe connection else { return }
    let context = unsafe Unmanaged<DaemonContext>.fromOpaque(cls).takeUnretainedValue()
    let key = UInt(bitPattern: Int(bitPattern: connection))
    if code.rawValue == 0 {  // MHD_CONNECTION_NOTIFY_STARTED (1 is MHD_CONNECTION_NOTIFY_CLOSED)
        context.watchdog.opened(
            key, descriptor: unsafe cmhd_connection_fd(connection), now: DispatchTime.now().uptimeNanoseconds)
    } else {
        context.watchdog.closed(key)
    }
}


/// Builds the MHD response and queues it; MHD keeps its own reference, so we destroy ours.
private func queue(
    _ response: RawResponse, of exchange: HTTPExchange, on connection: OpaquePointer, context: DaemonContext
) -> MHD_Result {
    let created: OpaquePointer?
    switch response.body {
    case .bytes(let bytes):
        unsafe created = bytes.withUnsafeBytes { buffer in
            unsafe MHD_create_response_from_buffer(
                buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), .RESPMEM_MUST_COPY
            )
        }
    case .file(let descriptor, let offset, let length):
        unsafe created = MHD_create_response_from_fd_at_offset64(length, descriptor, offset)
        if unsafe created == nil { cmhd_close_fd(descriptor) }
    case .stream(let length, let source):
        let body = unsafe StreamedBody(length: length, source: source, connection: ConnectionHandle(pointer: connection))
        unsafe created = streamedResponse(body)
        if unsafe created != nil { exchange.attach(body) }
    }
    guard let created = unsafe created else { return .NO }
    for (name, value) in response.headers {
        // MHD rejects names/values with CR or LF; such a header is dropped rather than injected.
        // Explicit `withCString`: the implicit String-to-pointer conversion built a fresh
        // NUL-terminated array for each argument here (two allocations per header).
        _ = unsafe name.withCString { name in
            unsafe value.withCString { value in unsafe MHD_add_response_header(created, name, value) }
        }
    }
    if context.isDraining {
        _ = unsafe MHD_add_response_header(created, "Connection", "close")
    }
    let result = unsafe MHD_queue_response(connection, UInt32(clamping: response.status), created)
    unsafe MHD_destroy_response(created)
    return result
}

/// Collects header fields in arrival order; `cls` points at this box during the call only.
private final class HeaderCollector {
    /// Room for a typical request's fields, so collecting them does not regrow the array.
    var fields: [(name: String, value: String)] = {
        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(12)
        return fields
    }()
}

private func collectHeader(
    _ cls: UnsafeMutableRawPointer?,
    _ kind: MHD_ValueKind,
    _ key: UnsafePointer<CChar>?,
    _ keySize: Int,
    _ value: UnsafePointer<CChar>?,
    _ valueSize: Int
) -> MHD_Result {
    guard let cls = unsafe cls, let key = unsafe key else { return .YES }
    let collector = unsafe Unmanaged<HeaderCollector>.fromOpaque(cls).takeUnretainedValue()
    let name = unsafe String(decoding: UnsafeRawBufferPointer(start: key, count: keySize), as: UTF8.self)
    let text = unsafe value.map {
        unsafe String(decoding: UnsafeRawBufferPointer(start: $0, count: valueSize), as: UTF8.self)
    } ?? ""
    collector.fields.append((name, text))
    return .YES
}

private func requestHeaders(_ connection: OpaquePointer) -> [(name: String, value: String)] {
    let collector = HeaderCollector()
    withExtendedLifetime(collector) {
        _ = unsafe MHD_get_connection_values_n(
            connection, .HEADER_KIND, collectHeader, Unmanaged.passUnretained(collector).toOpaque()
        )
    }
    return collector.fields
}

private func clientAddress(_ connection: OpaquePointer) -> String {
    unsafe withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
        let length = unsafe buffer.withMemoryRebound(to: CChar.self) {
            unsafe cmhd_client_address(connection, $0.baseAddress, $0.count)
        }
        return unsafe String(decoding: UnsafeBufferPointer(rebasing: buffer[..<length]), as: UTF8.self)
    }
}
