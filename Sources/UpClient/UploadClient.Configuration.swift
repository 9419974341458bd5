public import Basics

extension UploadClient {
    /// The client's settings; every default is set in the property declarations and documented.
    public struct Configuration: Sendable {
        /// Up hosts (`http(s)://host[:port]`), tried in order; requests fail over to the next on
        /// network errors and 5xx. Empty: use the hosts biz-server hands out with the token.
        public var upHosts: [String]
        /// Files of at most this many bytes go by form upload under ``UploadProtocol/automatic``.
        /// Default 4 MiB; values above 4 MiB are treated as 4 MiB, because the form body is built
        /// in memory.
        public var formThreshold: Int64 = 4 << 20
        /// Which protocol to use. Default ``UploadProtocol/automatic``.
        public var protocolChoice: UploadProtocol = .automatic
        /// v1 blocks / v2 parts in flight at once; clamped to 1…64. Default 4.
        public var concurrency: Int = 4
        /// v1 chunk size, clamped to 1 KiB…4 MiB (any size, not only divisors of 4 MiB). Default 4 MiB.
        public var chunkSize: Int = 4 << 20
        /// v2 part size, clamped to 1 MiB…1 GiB. Default 4 MiB (keeps the v1 etag, §7.2).
        public var partSize: Int = 4 << 20
        /// Retries per request after the first attempt. Default 3.
        public var maxRetries: Int = 3
        /// Time allowed for one request, upload included. Default 60 s.
        public var requestTimeout: Duration = .seconds(60)
        /// The first retry waits about this long, doubling each time (with jitter). Default 500 ms.
        public var retryBaseDelay: Duration = .milliseconds(500)
        /// The longest wait between retries, also the cap on `Retry-After`. Default 30 s.
        public var maxRetryDelay: Duration = .seconds(30)
        /// A biz-server token is refreshed when less than this (or half its lifetime, whichever
        /// is less) remains. Default 5 minutes.
        public var tokenRefreshMargin: Duration = .seconds(300)
        /// Send the upload's bytes at most this fast, bytes per second, evenly (``UploadPacer``:
        /// one schedule for all requests in flight, each body paced by the transport); nil
        /// (the default) means as fast as the network goes.
        public var maxBytesPerSecond: Int64?
        /// The wall clock for token and ctx expiry (tests pass a manual one). Default the system clock.
        public var clock: any WallClock = SystemClock()

        /// Creates a configuration for these up hosts; everything else has its default.
        public init(upHosts: [String]) {
            self.upHosts = upHosts
        }

        /// ``concurrency`` clamped.
        var effectiveConcurrency: Int { min(64, max(1, concurrency)) }
        /// ``chunkSize`` clamped.
        var effectiveChunkSize: Int { min(4 << 20, max(1 << 10, chunkSize)) }
        /// ``partSize`` clamped.
        var effectivePartSize: Int64 { Int64(min(1 << 30, max(1 << 20, partSize))) }
        /// ``formThreshold`` clamped.
        var effectiveFormThreshold: Int64 { min(4 << 20, formThreshold) }
        /// The retry policy these settings describe.
        var retryPolicy: RetryPolicy {
            RetryPolicy(maxRetries: max(0, maxRetries), baseDelay: retryBaseDelay, maxDelay: maxRetryDelay)
        }
    }
}
