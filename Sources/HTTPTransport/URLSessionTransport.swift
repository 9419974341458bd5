import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``StreamingHTTPTransport`` on Foundation's `URLSession`: the transport for an app on Apple
/// platforms, where libcurl is not available and URLSession is the system's HTTP stack (proxies,
/// cellular policy, App Transport Security). On Linux it runs on FoundationNetworking, which is
/// how its tests run here; there ``CurlTransport`` is the better choice (DESIGN.md: URLSession
/// on Linux spins a core while it waits).
///
/// It honours the same contract as ``CurlTransport`` (the same tests run against both), with
/// these differences, each forced by URLSession:
/// - File regions (`TransportBody.file` with an offset, or shorter than the file) and streamed
///   bodies are first copied to a temporary file in ``Configuration/spoolDirectory``, then
///   uploaded from it: URLSession uploads a whole file or a `Data`, and its streamed bodies
///   (`httpBodyStream`) need an `InputStream` written through raw pointers. Memory stays bounded
///   (the copy moves 256 KiB at a time); the cost is one extra write of each chunk to disk, and a
///   streamed body is produced completely before it is sent. A whole file is uploaded directly.
/// - Response header fields come from a dictionary: arrival order is lost and a repeated field
///   arrives as one comma-joined value (lookups stay case-insensitive).
/// - `TransportRequest.connectTimeout` is not enforced separately; `timeout` (covering the whole
///   exchange, enforced by this type's own timer) and ``Configuration/stallTimeout`` are.
/// - A `Host` field is passed to URLSession, which on Apple platforms ignores it.
/// - `maxSendBytesPerSecond` cannot be honoured (URLSession has no pacing): a request asking
///   for it is refused with ``TransportError/Kind/invalidRequest`` rather than silently sent at
///   full speed.
/// - Responses are read ahead of a slow reader of a streamed body (URLSession pushes data; no
///   window), so ``stream(_:body:)`` bounds the pieces, not the bytes held.
/// Redirects are returned, not followed, as with ``CurlTransport``.
public final class URLSessionTransport: StreamingHTTPTransport {
    /// Connection limit, stall detection and where bodies are spooled.
    public struct Configuration: Sendable {
        /// Connections open at once to one host (URLSession's `httpMaximumConnectionsPerHost`).
        /// Default 16.
        public var maxConnectionsPerHost: Int
        /// Fail with ``TransportError/Kind/timeout`` when no byte moves for this long
        /// (URLSession's request timeout, an idle timer). Default 60 s.
        public var stallTimeout: Duration
        /// The directory for spooled bodies; nil (the default) is the temporary directory, which
        /// inside an app sandbox is the app's own `tmp/`.
        public var spoolDirectory: String?

        /// Creates a configuration; see each property for its meaning and default.
        public init(maxConnectionsPerHost: Int = 16, stallTimeout: Duration = .seconds(60), spoolDirectory: String? = nil) {
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.stallTimeout = stallTimeout
            self.spoolDirectory = spoolDirectory
        }
    }

    /// The settings.
    public let configuration: Configuration
    private let session: URLSession
    private let events: SessionEvents

    /// Creates the transport with its own ephemeral session (no cookies, no cache).
    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
        let settings = URLSessionConfiguration.ephemeral
        settings.httpMaximumConnectionsPerHost = max(1, configuration.maxConnectionsPerHost)
        settings.timeoutIntervalForRequest = Self.seconds(configuration.stallTimeout)
        settings.timeoutIntervalForResource = 7 * 24 * 3600  // the per-request timer governs
        settings.httpShouldSetCookies = false
        settings.httpCookieStorage = nil
        settings.urlCache = nil
        settings.requestCachePolicy = .reloadIgnoringLocalCacheData
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1  // a task's events in order
        events = SessionEvents()
        session = URLSession(configuration: settings, delegate: events, delegateQueue: queue)
    }

    deinit { session.invalidateAndCancel() }

    /// Sends `request`; see ``HTTPTransport/send(_:)``. Throws ``TransportError``.
    public func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        do {
            let streaming = try await open(request, body: nil)
            let body = try await streaming.body.collect(upTo: max(0, request.maxResponseBytes))
            var response = streaming.head
            response.body = body
            return response
        } catch let error as TransportError {
            throw error
        } catch {
            throw TransportError(.other, "\(error)")
        }
    }

    /// Sends `request` with `body` and returns at the response head; see
    /// ``StreamingHTTPTransport/stream(_:body:)`` and this type's notes on spooling.
    public func stream(_ request: TransportRequest, body: StreamedRequestBody?) async throws -> StreamingResponse {
        try await open(request, body: body)
    }

    /// Validates, prepares the body, starts the task and waits for the response head.
    private func open(_ request: TransportRequest, body streamed: StreamedRequestBody?) async throws -> StreamingResponse {
        guard !Task.isCancelled else { throw TransportError(.cancelled, "the calling task was cancelled before sending") }
        let deadline = ContinuousClock.now + max(request.timeout, .milliseconds(1))
        var urlRequest = try RequestValidation.urlRequest(for: request, hasStreamedBody: streamed != nil)
        urlRequest.timeoutInterval = Self.seconds(configuration.stallTimeout)
        let spool = BodySpool(directory: configuration.spoolDirectory ?? NSTemporaryDirectory())
        let upload: BodySpool.Upload
        if let streamed {
            upload = try await spool.spool(streamed)
        } else {
            upload = try spool.prepare(request.body)
        }
        let task: URLSessionTask = switch upload {
        case .none: session.dataTask(with: urlRequest)
        case .data(let data): session.uploadTask(with: urlRequest, from: data)
        case .file(let url, _): session.uploadTask(with: urlRequest, fromFile: url)
        }
        let exchange = Exchange(task: task, progress: request.progress, cleanup: { upload.remove() })
        events.register(exchange, for: task.taskIdentifier)
        exchange.start(deadline: deadline)
        return try await exchange.head()
    }

    /// `duration` in seconds as URLSession takes it (at least 1 ms).
    static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return max(0.001, Double(seconds) + Double(attoseconds) / 1e18)
    }
}
