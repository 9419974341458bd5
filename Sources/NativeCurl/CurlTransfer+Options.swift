internal import CCurl

// The easy-handle options for one request. Every call goes through a typed shim from shim.h
// (curl_easy_setopt is variadic); the option groups follow the request's needs, in this order:
// where to go, how to connect, how long to wait, what to send, what to accept.

extension CurlTransfer {
    func configure(_ request: CurlRequest) throws(CurlError) {
        try set(CURLOPT_URL, request.url)
        // Only HTTP(S): a callback URL from an upload policy must never reach file:// or gopher://.
        try set(CURLOPT_PROTOCOLS_STR, "http,https")
        // Signals would hit arbitrary Swift threads (DNS timeouts use SIGALRM otherwise).
        try set(CURLOPT_NOSIGNAL, 1)
        // Every call here is direct (client → up-server, up-server → biz-server): ignore
        // http_proxy/https_proxy from the environment.
        try set(CURLOPT_NOPROXY, "*")
        try set(CURLOPT_TCP_NODELAY, 1)
        try set(CURLOPT_TCP_KEEPALIVE, 1)
        try set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        try unsafe set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
        try unsafe set(CURLOPT_PRIVATE, pointer: Unmanaged.passUnretained(self).toOpaque())

        try set(CURLOPT_CONNECTTIMEOUT_MS, max(1, request.connectTimeoutMilliseconds))
        try set(CURLOPT_TIMEOUT_MS, max(1, request.timeoutMilliseconds))
        if request.lowSpeedLimit > 0 {
            try set(CURLOPT_LOW_SPEED_LIMIT, request.lowSpeedLimit)
            try set(CURLOPT_LOW_SPEED_TIME, max(1, request.lowSpeedTimeSeconds))
        }
        // 0 would mean "no limit" to libcurl; the write callback enforces a 0 cap instead. A
        // streamed response has no cap: its consumer holds only the pipe's window.
        if request.maxResponseBytes > 0 && responsePipe == nil {
            try set(CURLOPT_MAXFILESIZE_LARGE, offT: Int64(request.maxResponseBytes))
        }

        try installCallbacks()
        try setMethod(request)
        try setHeaders(request.headers)
    }

    /// GET and HEAD are libcurl's own modes; anything with a body is an "upload" (the read
    /// callback supplies it, `Content-Length` is exact) with the method name substituted, which
    /// also keeps libcurl from adding the form Content-Type it adds for CURLOPT_POST.
    private func setMethod(_ request: CurlRequest) throws(CurlError) {
        let method = request.method
        let hasBody = request.body.count > 0 || method == "POST" || method == "PUT" || method == "PATCH"
        if method == "HEAD" && request.body.count == 0 {
            try set(CURLOPT_NOBODY, 1)
        } else if hasBody {
            // CURLOPT_UPLOAD_BUFFERSIZE stays at libcurl's 64 KiB: 512 KiB was indistinguishable
            // in the loopback benchmark (scripts/bench/transport; medians 500-1400 MiB/s either way).
            try set(CURLOPT_UPLOAD, 1)
            try set(CURLOPT_INFILESIZE_LARGE, offT: request.body.count)
            if method != "PUT" { try set(CURLOPT_CUSTOMREQUEST, method) }
        } else if method == "GET" {
            try set(CURLOPT_HTTPGET, 1)
        } else {
            try set(CURLOPT_CUSTOMREQUEST, method)
        }
    }

    /// Caller headers in order (a `Host` replaces libcurl's), plus an empty `Expect:` so libcurl
    /// never waits for `100 Continue` before sending a body: our servers do not send it, and the
    /// wait would add up to a second per request.
    private func setHeaders(_ headers: [(name: String, value: String)]) throws(CurlError) {
        var lines = headers.map { name, value in
            // "Name:" with nothing after it tells libcurl to remove the header; "Name;" sends it empty.
            value.isEmpty ? "\(name);" : "\(name): \(value)"
        }
        if !headers.contains(where: { $0.name.lowercased() == "expect" }) { lines.append("Expect:") }
        for line in lines {
            guard let appended = unsafe curl_slist_append(headerList, line) else {
                throw CurlError(code: .outOfMemory, message: "curl_slist_append failed")
            }
            unsafe headerList = appended
        }
        try check(unsafe ccurl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList))
    }

    func set(_ option: CURLoption, _ value: Int) throws(CurlError) {
        try check(unsafe ccurl_easy_setopt_long(easy, option, value))
    }

    func set(_ option: CURLoption, offT value: Int64) throws(CurlError) {
        try check(unsafe ccurl_easy_setopt_off_t(easy, option, curl_off_t(value)))
    }

    /// libcurl copies string options, so the temporary C string may go away after the call.
    func set(_ option: CURLoption, _ value: String) throws(CurlError) {
        try check(unsafe ccurl_easy_setopt_string(easy, option, value))
    }

    func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer) throws(CurlError) {
        try check(unsafe ccurl_easy_setopt_pointer(easy, option, pointer))
    }

    func check(_ code: CURLcode) throws(CurlError) {
        guard code == CURLE_OK else {
            let message = unsafe String(cString: curl_easy_strerror(code))
            throw CurlError(code: .init(rawValue: Int(code.rawValue)), message: message)
        }
    }
}
