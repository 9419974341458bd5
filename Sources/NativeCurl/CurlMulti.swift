import Synchronization

/// An HTTP/1.1 client on one libcurl multi handle and one dedicated thread.
///
/// ```swift
/// let curl = try CurlMulti()
/// let response = try await curl.perform(CurlRequest(method: "GET", url: "http://127.0.0.1:8080/health"))
/// ```
///
/// Every transfer shares the multi handle's connection pool (keep-alive reuse per host) and DNS
/// cache. While transfers wait, the thread sleeps in `curl_multi_poll`: no Swift task and no
/// cooperative-pool thread is blocked, and no CPU is spent. Cancelling the awaiting task removes
/// the transfer from the multi handle and closes its connection.
public final class CurlMulti: Sendable {
    /// Connection limits; every default is set in the initializer.
    public struct Options: Sendable {
        /// Connections open at once to one host:port; more transfers queue inside libcurl until
        /// one frees up. 0 means no limit. Default 16.
        public var maxConnectionsPerHost: Int
        /// Connections open at once in total; 0 means no limit. Default 0.
        public var maxTotalConnections: Int
        /// Idle connections kept for reuse (the pool size). Default 32.
        public var maxIdleConnections: Int

        /// Creates options; see each property for its meaning and default.
        public init(maxConnectionsPerHost: Int = 16, maxTotalConnections: Int = 0, maxIdleConnections: Int = 32) {
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.maxTotalConnections = maxTotalConnections
            self.maxIdleConnections = maxIdleConnections
        }
    }

    private let loop: CurlMultiLoop
    private let nextID = Atomic<UInt64>(1)

    /// Creates the multi handle and starts its thread.
    public init(options: Options = .init()) throws(CurlError) {
        loop = try CurlMultiLoop(options: options)
        loop.start()
    }

    deinit {
        loop.stop()
    }

    /// New connections opened so far by completed transfers; far below the request count when
    /// keep-alive reuse works.
    public var connectionsOpened: Int { loop.connectionsOpened }

    /// Sends `request` and returns the response, whatever its status. Throws ``CurlError``: an
    /// invalid request or unreadable body file before anything is sent, otherwise libcurl's
    /// failure; cancelling the task throws ``CurlError/Code/abortedByCallback`` promptly.
    public func perform(_ request: CurlRequest) async throws(CurlError) -> CurlResponse {
        try await perform(request, id: nextID.add(1, ordering: .relaxed).oldValue, responsePipe: nil)
    }

    /// Sends `request` and returns as soon as the response head is in: its status and fields,
    /// with the body to be read from the pipe as it arrives (at most `window` bytes are held; a
    /// slow reader pauses the transfer). A streamed request body (`CurlRequest.Body.stream`) is
    /// sent as its producer writes it. The total timeout covers the whole transfer, body included.
    public func open(_ request: CurlRequest, window: Int = 256 << 10) async throws(CurlError) -> (CurlResponse, CurlResponsePipe) {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let pipe = CurlResponsePipe(window: window)
        let loop = self.loop
        pipe.attach(resume: { loop.resume(id) }, cancel: { loop.cancel(id) })
        return (try await perform(request, id: id, responsePipe: pipe), pipe)
    }

    private func perform(_ request: CurlRequest, id: UInt64, responsePipe: CurlResponsePipe?) async throws(CurlError) -> CurlResponse {
        if case .stream(let pipe, _) = request.body {
            let loop = self.loop
            pipe.attach { loop.resume(id) }
        }
        let outcome = Mutex<CheckedContinuation<Result<CurlResponse, CurlError>, Never>?>(nil)
        let transfer = try CurlTransfer.make(id: id, request: request, responsePipe: responsePipe) { result in
            outcome.withLock { pending in
                pending?.resume(returning: result)
                pending = nil
            }
        }
        let loop = self.loop
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                outcome.withLock { $0 = continuation }
                loop.submit(transfer)
            }
        } onCancel: {
            // Either order works: the flag stops a transfer not yet added (or inside a
            // callback), the message removes one the loop is running.
            transfer.cancel()
            loop.cancel(id)
        }
        return try result.get()
    }
}
