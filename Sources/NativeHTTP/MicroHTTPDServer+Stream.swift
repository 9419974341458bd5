internal import CMicroHTTPD

// The content-reader callbacks of a streamed body (RawResponse.Body.stream). The StreamedBody
// travels retained in `crc_cls`: MHD calls the free callback exactly once, when the last
// reference to the response goes (after sending, or when the connection closes early), and that
// callback releases it.

/// An MHD response reading from `body`, or nil (the body's source cancelled) if MHD refused.
func streamedResponse(_ body: StreamedBody) -> OpaquePointer? {
    let cls = unsafe Unmanaged.passRetained(body).toOpaque()
    let created = unsafe MHD_create_response_from_callback(
        body.length, StreamedBody.blockSize, onStreamRead, cls, onStreamFreed)
    if unsafe created == nil {
        // MHD does not call the free callback for a response it never created.
        unsafe Unmanaged<StreamedBody>.fromOpaque(cls).release()
        body.released()
    }
    return unsafe created
}

/// MHD wants up to `max` more bytes at `position` (always the sum of what was returned so far:
/// the response is never reused).
private func onStreamRead(
    _ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ max: Int
) -> Int {
    guard let cls = unsafe cls, let buffer = unsafe buffer else { return -2 }
    let body = unsafe Unmanaged<StreamedBody>.fromOpaque(cls).takeUnretainedValue()
    return unsafe body.read(into: UnsafeMutableRawPointer(buffer), max: max)
}

/// MHD is done with the response.
private func onStreamFreed(_ cls: UnsafeMutableRawPointer?) {
    guard let cls = unsafe cls else { return }
    let body = unsafe Unmanaged<StreamedBody>.fromOpaque(cls).takeRetainedValue()
    body.released()
}
