internal import CCurl
#if canImport(Glibc)
import Glibc
#endif

// The C callbacks of an easy handle. They are top-level and capture nothing, so they convert to
// @convention(c); the CurlTransfer arrives unretained in the data pointer: the loop's table of
// active transfers keeps it alive from curl_multi_add_handle until after
// curl_multi_remove_handle, and libcurl calls these only in between, on the loop thread.

extension CurlTransfer {
    func installCallbacks() throws(CurlError) {
        let context = unsafe Unmanaged.passUnretained(self).toOpaque()
        try check(unsafe ccurl_easy_setopt_write_function(easy, CURLOPT_WRITEFUNCTION, onBodyData))
        try unsafe set(CURLOPT_WRITEDATA, pointer: context)
        try check(unsafe ccurl_easy_setopt_write_function(easy, CURLOPT_HEADERFUNCTION, onHeaderLine))
        try unsafe set(CURLOPT_HEADERDATA, pointer: context)
        try check(unsafe ccurl_easy_setopt_read_function(easy, onReadBody))
        try unsafe set(CURLOPT_READDATA, pointer: context)
        try check(unsafe ccurl_easy_setopt_seek_function(easy, onSeekBody))
        try unsafe set(CURLOPT_SEEKDATA, pointer: context)
        try set(CURLOPT_NOPROGRESS, 0)
        try check(unsafe ccurl_easy_setopt_xferinfo_function(easy, onProgress))
        try unsafe set(CURLOPT_XFERINFODATA, pointer: context)
    }

    /// Appends response body bytes; refusing them (returning a different count) is how a write
    /// callback stops a transfer, here when the body would pass the cap.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        if let responsePipe {
            deliverHead()
            switch unsafe responsePipe.receive(bytes) {
            case .accepted: return bytes.count
            case .pause: return Int(CURL_WRITEFUNC_PAUSE)
            case .refuse: return 0
            }
        }
        guard responseBody.count + bytes.count <= maxResponseBytes else {
            exceededResponseLimit = true
            return 0
        }
        if responseBody.isEmpty {
            var announced: curl_off_t = -1
            _ = unsafe ccurl_easy_getinfo_off_t(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced)
            if announced > 0 { responseBody.reserveCapacity(min(Int(announced), maxResponseBytes)) }
        }
        unsafe responseBody.append(contentsOf: bytes)
        return bytes.count
    }

    /// One header line, CRLF included. A status line starts a new response (after a 1xx), so the
    /// fields kept are always those of the final one; folded lines (obs-fold) join the previous;
    /// the blank line marks the head complete.
    func receiveHeaderLine(_ line: String) {
        var text = Substring(line)
        while let last = text.last, last == "\r" || last == "\n" || last == "\r\n" { text = text.dropLast() }
        if text.hasPrefix("HTTP/") {
            responseHeaders = []
            responseHeadComplete = false
        } else if text.isEmpty {
            responseHeadComplete = true
        } else if let first = text.first, first == " " || first == "\t" {
            guard !responseHeaders.isEmpty else { return }
            responseHeaders[responseHeaders.count - 1].value += " " + Self.trimmed(text)
        } else if let colon = text.firstIndex(of: ":") {
            responseHeaders.append((String(text[..<colon]), Self.trimmed(text[text.index(after: colon)...])))
        }
    }

    /// Fills `buffer` with the next body bytes: 0 at the end, CURL_READFUNC_ABORT if the file
    /// cannot be read or ends before its region does (it shrank after we opened it).
    func readBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let wanted = Int(min(Int64(buffer.count), bodyLength - bodyPosition))
        guard wanted > 0, let base = buffer.baseAddress else { return 0 }
        if isCancelled { return Int(CURL_READFUNC_ABORT) }
        var count = 0
        if let bodyPipe {
            switch unsafe bodyPipe.read(into: UnsafeMutableRawBufferPointer(start: base, count: wanted)) {
            case .bytes(let n): count = n
            case .pause: return Int(CURL_READFUNC_PAUSE)
            case .failed(let message):
                readFailure = (EIO, "request body stream failed: \(message)")
                return Int(CURL_READFUNC_ABORT)
            case .end:
                readFailure = (EIO, "request body stream ended \(bodyLength - bodyPosition) bytes early")
                return Int(CURL_READFUNC_ABORT)
            }
        } else if fileDescriptor >= 0 {
            repeat {
                count = unsafe pread(fileDescriptor, base, wanted, off_t(bodyOffset + bodyPosition))
            } while count < 0 && errno == EINTR
            if count < 0 {
                readFailure = (errno, "cannot read request body: \(Self.describe(errno))")
                return Int(CURL_READFUNC_ABORT)
            }
            if count == 0 {
                readFailure = (EIO, "request body file ended \(bodyLength - bodyPosition) bytes early")
                return Int(CURL_READFUNC_ABORT)
            }
        } else {
            let start = Int(bodyPosition)
            unsafe bodyBytes.withUnsafeBytes { source in
                unsafe base.copyMemory(from: source.baseAddress! + start, byteCount: wanted)
            }
            count = wanted
        }
        bodyPosition += Int64(count)
        return count
    }

    /// Rewinds the body for a resend (libcurl only ever seeks from the start).
    func seekBody(to offset: Int64, origin: Int32) -> Int32 {
        guard origin == SEEK_SET, offset >= 0, offset <= bodyLength else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
        // Bytes taken from a stream are gone: only "rewind" to where it stands.
        if bodyPipe != nil && offset != bodyPosition { return Int32(CURL_SEEKFUNC_CANTSEEK) }
        bodyPosition = offset
        return Int32(CURL_SEEKFUNC_OK)
    }

    /// `text` without leading and trailing spaces and tabs. Works on UTF-8 bytes: the same walk
    /// over `Character`s (grapheme breaking, twice reversed) was most of the CPU time a callback
    /// delivery spent in libcurl's header callback.
    private static func trimmed(_ text: Substring) -> String {
        var bytes = text.utf8[...]
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        return String(Substring(bytes))
    }
}

private func transfer(_ context: UnsafeMutableRawPointer?) -> CurlTransfer? {
    guard let context = unsafe context else { return nil }
    return unsafe Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
}

private func onBodyData(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let transfer = unsafe transfer(context) else { return 0 }
    return unsafe transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
}

private func onHeaderLine(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let transfer = unsafe transfer(context) else { return 0 }
    let bytes = unsafe UnsafeRawBufferPointer(start: data, count: size * count)
    // Copy out now: the buffer is libcurl's and is reused as soon as we return.
    transfer.receiveHeaderLine(unsafe String(decoding: bytes, as: UTF8.self))
    return size * count
}

private func onReadBody(
    _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let transfer = unsafe transfer(context) else { return Int(CURL_READFUNC_ABORT) }
    return unsafe transfer.readBody(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
}

private func onSeekBody(_ context: UnsafeMutableRawPointer?, _ offset: curl_off_t, _ origin: Int32) -> Int32 {
    guard let transfer = unsafe transfer(context) else { return Int32(CURL_SEEKFUNC_FAIL) }
    return transfer.seekBody(to: Int64(offset), origin: origin)
}

/// Progress, and the prompt way to stop a transfer that is cancelled while libcurl is inside
/// it: a non-zero return aborts with CURLE_ABORTED_BY_CALLBACK.
private func onProgress(
    _ context: UnsafeMutableRawPointer?, _ downloadTotal: curl_off_t, _ downloaded: curl_off_t,
    _ uploadTotal: curl_off_t, _ uploaded: curl_off_t
) -> Int32 {
    guard let transfer = unsafe transfer(context) else { return 1 }
    transfer.reportProgress(Int64(uploaded))
    return transfer.isCancelled ? 1 : 0
}
