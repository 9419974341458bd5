internal import CCurl

/// `curl_global_init`, exactly once per process.
///
/// libcurl requires it before any other call and it is not thread-safe itself; a Swift `static
/// let` initializer runs once under `swift_once`, which gives us the "once" for free.
enum CurlGlobal {
    private static let result: CURLcode = curl_global_init(Int(CURL_GLOBAL_ALL))

    /// Initializes libcurl if needed; throws if it cannot be initialized (out of memory, broken
    /// TLS backend), which every later call would trip over anyway.
    static func ensureInitialized() throws(CurlError) {
        let code = result
        guard code == CURLE_OK else {
            throw CurlError(code: .init(rawValue: Int(code.rawValue)), message: "curl_global_init failed")
        }
    }
}
