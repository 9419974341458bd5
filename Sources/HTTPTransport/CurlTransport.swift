#if os(Linux)  // NativeCurl is a Linux-only dependency (Package.swift)
internal import NativeCurl

/// ``HTTPTransport`` on libcurl: HTTP/1.1 with keep-alive, direct connections only (proxy
/// variables are ignored), no `Expect: 100-continue`, redirects returned rather than followed,
/// only http and https URLs, file bodies streamed from disk.
///
/// Design: one libcurl multi handle driven by one dedicated thread (`CurlMulti`), rather than a
/// pool of worker threads each owning an easy handle. Both keep the Swift cooperative pool free
/// while transfers wait; the multi handle wins on the rest:
/// - Concurrency is not capped by a thread count: 200 concurrent requests are 200 transfers on
///   one thread, queued by libcurl on `maxConnectionsPerHost` keep-alive connections, instead of
///   200 requests queued on N threads or 200 threads.
/// - One connection pool and DNS cache shared by every request, instead of one per worker
///   (a per-worker pool reconnects whenever a request lands on a worker that has not yet talked
///   to that host).
/// - Cancellation is exact: the loop removes the easy handle and closes its socket, whereas a
///   blocked `curl_easy_perform` can only be stopped at its next progress callback.
/// (The worker-pool variant was not built: those are design reasons; the figures are this one's.)
/// Measured (scripts/bench/transport: release build, loopback PUT to an HTTPKit streaming route,
/// 2 cores under a load average of ~10 from other builds, so wall-clock figures are noisy):
/// - waiting 2 s for a slow response: 0.00 s of process CPU (one 10 ms tick is the resolution);
/// - 64 MiB in one request: medians 520-1440 MiB/s from memory, 550-1420 MiB/s from a file
///   region; 16 x 4 MiB chunks from the file, 4 in flight: medians 490-1450 MiB/s;
/// - process CPU (client and server together) 0.04-0.09 s per 64 MiB, so the one loop thread is
///   far from being the bottleneck.
/// Its cost: callbacks (file reads, progress) run on the loop thread, so a slow disk read stalls
/// the other transfers for its duration. Page-cache reads are cheap next to the socket writes they
/// feed: 64 MiB from a file cost about the same CPU as from memory.
public final class CurlTransport: HTTPTransport {
    /// The settings.
    public let configuration: Configuration
    let multi: CurlMulti

    /// Creates the transport and starts its I/O thread. Throws only if libcurl cannot be
    /// initialized (out of memory, broken TLS library).
    public init(configuration: Configuration = .init()) throws(TransportError) {
        self.configuration = configuration
        do {
            multi = try CurlMulti(options: .init(
                maxConnectionsPerHost: configuration.maxConnectionsPerHost,
                maxTotalConnections: configuration.maxTotalConnections,
                maxIdleConnections: configuration.maxIdleConnections
            ))
        } catch {
            throw TransportError(.other, error.description)
        }
    }

    /// New TCP connections opened so far; with keep-alive far fewer than requests sent.
    public var connectionsOpened: Int { multi.connectionsOpened }

    /// Sends `request`; see ``HTTPTransport/send(_:)``. Throws ``TransportError``.
    public func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        let curlRequest = curlRequest(for: request)
        do {
            let response = try await multi.perform(curlRequest)
            return TransportResponse(status: response.status, headers: response.headers.map { ($0.name, $0.value) }, body: response.body)
        } catch {
            throw Self.transportError(error)
        }
    }

    /// `request` with this transport's settings, as libcurl takes it.
    func curlRequest(for request: TransportRequest) -> CurlRequest {
        CurlRequest(
            method: request.method,
            url: request.url,
            headers: request.headers.map { (name: $0.0, value: $0.1) },
            body: Self.curlBody(request.body),
            connectTimeoutMilliseconds: Self.milliseconds(request.connectTimeout),
            timeoutMilliseconds: Self.milliseconds(request.timeout),
            lowSpeedLimit: max(0, configuration.lowSpeedLimit),
            lowSpeedTimeSeconds: max(1, Int(clamping: configuration.lowSpeedTime.components.seconds)),
            maxResponseBytes: max(0, request.maxResponseBytes),
            maxSendBytesPerSecond: max(0, request.maxSendBytesPerSecond),
            progress: request.progress
        )
    }

    /// The one place a libcurl failure becomes a ``TransportError``.
    static func transportError(_ error: CurlError) -> TransportError {
        let kind: TransportError.Kind = switch error.code {
        case .couldntConnect, .couldntResolveHost, .couldntResolveProxy: .connect
        case .operationTimedOut: .timeout
        case .abortedByCallback: .cancelled
        case .fileSizeExceeded: .tooLarge
        case .readError: .io(errno: error.systemErrno)
        case .badFunctionArgument, .urlMalformat, .unsupportedProtocol: .invalidRequest
        default: .other
        }
        return TransportError(kind, error.description)
    }

    static func curlBody(_ body: TransportBody) -> CurlRequest.Body {
        switch body {
        case .none: .none
        case .bytes(let bytes): .bytes(bytes)
        case .file(let path, let offset, let length): .file(path: path, offset: offset, length: length)
        }
    }

    /// Whole milliseconds, rounded up so a positive duration never becomes 0 ("no timeout" to
    /// libcurl); zero and negative durations become 1 ms, i.e. fail fast rather than wait forever.
    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 1 }
        let whole = seconds.multipliedReportingOverflow(by: 1000)
        guard !whole.overflow else { return Int.max }
        let fraction = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return max(1, Int(clamping: whole.partialValue.addingReportingOverflow(fraction).partialValue))
    }
}
#endif
