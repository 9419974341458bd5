internal import CMicroHTTPD
internal import NativeOS
import Synchronization

/// One request in flight on a libmicrohttpd connection: its head, its body as it arrives, and the
/// single response it will get.
///
/// Threads: the body is fed and the response is queued on an MHD worker thread; ``body`` is read
/// and ``respond(_:)`` is called from Swift tasks. The connection is *suspended* whenever MHD must
/// wait for Swift (too many unread body pieces, or the final call arrived before the response),
/// and resumed by whoever removes the reason. `MHD_suspend_connection` is always called before the
/// `suspended` flag becomes visible, so a resume can never overtake its suspend (MHD would drop it).
///
/// Alternatively the body can be collected on the worker thread itself (``collectInline(limit:then:)``)
/// and the response given there too: then the connection is never suspended.
public final class HTTPExchange: Sendable {
    /// The request head.
    public let request: RawRequest

    let connection: ConnectionHandle
    let buffering: BodyBuffering
    private let state = Mutex(State())

    struct State {
        var pieces = ByteQueue()
        var receivedBytes = 0
        var bodyFinished = false
        var pendingResponse: RawResponse?
        var responded = false
        var suspended = false
        var closed = false
        var discardedBytes = 0
        /// The response went out on the socket while the body was still arriving (``EarlyResponse``).
        var answeredEarly = false
        var waiter: CheckedContinuation<[UInt8]?, any Error>?
        var inline: InlineCollector?
        /// The streamed body being sent, once its response is queued.
        var stream: StreamedBody?
        /// The daemon is stopping: a streamed body queued from now on is cut at once.
        var streamAborted = false

        /// The first of the pieces gathered for a parked reader (``HTTPExchange/take(_:)``),
        /// taken from the queue; nil when no reader is parked.
        mutating func takeGathered() -> [UInt8]? { waiter == nil ? nil : pieces.popFirst() }

        /// An answer was given while the body still arrives and is not written yet: MHD sends
        /// only after the body, so it goes out as an ``EarlyResponse``.
        var earlyAnswerIsDue: Bool { responded && !answeredEarly && !bodyFinished && !closed && pendingResponse != nil }

        /// Takes that answer to be written now; the final call then closes the connection.
        mutating func takeEarlyAnswer() -> RawResponse? {
            guard earlyAnswerIsDue, let response = pendingResponse else { return nil }
            pendingResponse = nil
            answeredEarly = true
            return response
        }
    }

    /// A body being collected on the worker thread, and who gets it.
    struct InlineCollector {
        var limit: Int
        var body: [UInt8] = []
        var completion: @Sendable (InlineBody) -> Void
    }

    init(request: RawRequest, connection: ConnectionHandle, buffering: BodyBuffering) {
        self.request = request
        self.connection = connection
        self.buffering = buffering
    }

    /// The body pieces in arrival order, with backpressure: at most about
    /// `MicroHTTPDServer.Options.bodyHighWater` bytes wait in memory before MHD stops reading.
    /// Read it once, from one task.
    public var body: HTTPBodyPieces { HTTPBodyPieces(exchange: self) }

    /// Whether ``respond(_:)`` has already accepted a response.
    public var hasResponded: Bool { state.withLock { $0.responded } }

    /// Whether the connection is currently parked waiting for Swift
    /// (for its request body, its response, or a streamed body's next piece).
    public var isSuspended: Bool { state.withLock { $0.suspended || ($0.stream?.isSuspended ?? false) } }

    /// Body bytes received from the client so far.
    public var receivedBodyBytes: Int { state.withLock { $0.receivedBytes } }

    /// The body bytes received so far while the request is still reading its body and nothing
    /// on the Swift side holds the connection back (not suspended, no response given, not
    /// closed); `nil` otherwise. ``ConnectionWatchdog`` cuts a body that stays here after its
    /// client has finished sending.
    var bytesIfReadingUnheld: Int? {
        state.withLock { s in
            s.bodyFinished || s.suspended || s.responded || s.closed ? nil : s.receivedBytes
        }
    }

    /// The body bytes received so far while an answer waits to be written before the body has
    /// ended (a deadline's 503 for a body still arriving); `nil` otherwise. ``receive(_:)`` writes
    /// such an answer with the next piece; ``ConnectionWatchdog`` writes it when no piece comes.
    var bytesIfAnsweredWhileReading: Int? {
        state.withLock { $0.earlyAnswerIsDue ? $0.receivedBytes : nil }
    }

    /// Takes the answer waiting as ``bytesIfAnsweredWhileReading`` describes, to be written now
    /// (``EarlyResponse``); the final call then closes the connection. `nil` if there is none
    /// any more (the next piece's ``receive(_:)`` wrote it, or the body ended and MHD sends it).
    func takeAnswerWhileReading() -> RawResponse? {
        state.withLock { $0.takeEarlyAnswer() }
    }

    /// Sends `response` (once). Returns `false` if a response was already given or the client is
    /// gone; in that case a file body's descriptor is closed (a streamed body's source cancelled)
    /// here.
    ///
    /// Body bytes the handler has not read are dropped; bytes still arriving are discarded (up to
    /// `discardLimit`, then the connection is closed) so the client can read the answer.
    @discardableResult
    public func respond(_ response: RawResponse) -> Bool {
        let (accepted, resume, waiter) = state.withLock { s -> (Bool, Bool, CheckedContinuation<[UInt8]?, any Error>?) in
            guard !s.responded, !s.closed else { return (false, false, nil) }
            s.responded = true
            s.pendingResponse = response
            s.pieces.removeAll()
            let waiter = s.waiter
            s.waiter = nil
            let resume = s.suspended
            s.suspended = false
            return (true, resume, waiter)
        }
        guard accepted else {
            Self.dispose(response)
            return false
        }
        waiter?.resume(throwing: HTTPExchangeError.responseAlreadySent)
        if resume { unsafe MHD_resume_connection(connection.pointer) }
        return true
    }

    /// Collects the body on the MHD worker thread instead of handing it to a task, then calls
    /// `completion` once, on that thread: with the whole body when it is complete, with
    /// ``InlineBody/tooLarge`` as soon as more than `limit` bytes have arrived, or with
    /// ``InlineBody/connectionClosed`` if the client goes away first. A response given (with
    /// ``respond(_:)``) inside `completion` is queued as soon as it returns, with no suspend,
    /// resume or thread switch.
    ///
    /// Call it from the server's handler (the head callback), before the body arrives, instead of
    /// reading ``body``. `completion` runs on a thread that serves other connections: it must not
    /// block or wait for I/O.
    public func collectInline(limit: Int, then completion: @escaping @Sendable (InlineBody) -> Void) {
        state.withLock { $0.inline = InlineCollector(limit: limit, completion: completion) }
    }

    // MARK: Swift side of the body

    func nextPiece() async throws -> [UInt8]? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8]?, any Error>) in
                enum Step { case piece([UInt8], resume: Bool), end, fail(any Error), wait }
                let step = state.withLock { s -> Step in
                    if let piece = s.pieces.popFirst() {
                        // Resume a reader parked for backpressure once the buffer has drained.
                        let resume = s.suspended && !s.bodyFinished && !s.responded
                            && s.pieces.count <= buffering.lowWater
                        if resume { s.suspended = false }
                        return .piece(piece, resume: resume)
                    }
                    if s.responded { return .fail(HTTPExchangeError.responseAlreadySent) }
                    if s.bodyFinished { return .end }
                    if s.closed { return .fail(HTTPExchangeError.connectionClosed) }
                    if Task.isCancelled { return .fail(CancellationError()) }
                    s.waiter = continuation
                    return .wait
                }
                switch step {
                case .piece(let piece, let resume):
                    if resume { unsafe MHD_resume_connection(connection.pointer) }
                    continuation.resume(returning: piece)
                case .end: continuation.resume(returning: nil)
                case .fail(let error): continuation.resume(throwing: error)
                case .wait: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { s in
                defer { s.waiter = nil }
                return s.waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    // MARK: MHD side (worker thread of this connection only)

    /// Takes a body piece. Returns `false` when the connection should be closed.
    ///
    /// A response given before the body has ended (413 as the limit is passed, or a handler that
    /// refuses early) is written here at once, by ``EarlyResponse``: MHD itself could only send it
    /// after the whole body, which for a large one never comes.
    func receive(_ piece: [UInt8]) -> Bool {
        let keepOpen = take(piece)
        let early = state.withLock { $0.takeEarlyAnswer() }
        guard let early else { return keepOpen }
        guard EarlyResponse.write(early, to: unsafe cmhd_connection_fd(connection.pointer)) else {
            Self.dispose(early)
            return false
        }
        return keepOpen
    }

    /// Whether the response was written by ``receive(_:)`` while the body still arrived: the
    /// connection must then be closed once the body has been discarded (MHD knows nothing of it).
    var wasAnsweredEarly: Bool { state.withLock { $0.answeredEarly } }

    private func take(_ piece: [UInt8]) -> Bool {
        typealias Waiter = CheckedContinuation<[UInt8]?, any Error>
        var tooLarge: (@Sendable (InlineBody) -> Void)?
        let (keepOpen, wake) = state.withLock { s -> (Bool, (Waiter, [UInt8])?) in
            s.receivedBytes += piece.count
            if s.responded {
                s.discardedBytes += piece.count
                return (s.discardedBytes <= buffering.discardLimit, nil)
            }
            if let waiter = s.waiter {
                // A reader is parked, and waking it costs a thread switch or two. A piece is
                // what one socket read brought (often 16 KiB), so while more of the body already
                // waits in the socket (MHD reads it as soon as this returns) the piece is queued
                // instead, up to `gatherLimit` bytes: a fraction of the wake-ups, no added wait.
                if s.pieces.count + piece.count < buffering.gatherLimit && moreBytesWaiting() {
                    s.pieces.append(piece)
                    return (true, nil)
                }
                s.waiter = nil
                guard !s.pieces.isEmpty, let first = s.pieces.popFirst() else { return (true, (waiter, piece)) }
                s.pieces.append(piece)
                return (true, (waiter, first))
            }
            if var inline = s.inline {
                s.inline = nil  // keeps `inline.body` uniquely referenced while it grows
                if inline.body.isEmpty { inline.body = piece } else { inline.body.append(contentsOf: piece) }
                if inline.body.count > inline.limit {
                    tooLarge = inline.completion
                } else {
                    s.inline = inline
                }
                return (true, nil)
            }
            s.pieces.append(piece)
            // Never parked once the client has sent all it will: a connection resumed before
            // MHD's final call reads first, and an end of stream read then (a client that
            // half-closed after its body) makes MHD close it unanswered. Those bytes are in
            // memory already, so there is nothing left to hold back.
            if s.pieces.count >= buffering.highWater && !s.suspended && !clientHasSentAll(s.receivedBytes) {
                unsafe MHD_suspend_connection(connection.pointer)
                s.suspended = true
            }
            return (true, nil)
        }
        if let (waiter, first) = wake { waiter.resume(returning: first) }
        tooLarge?(.tooLarge)
        return keepOpen
    }

    /// Whether the client has sent everything it will: the whole body of a declared length, or
    /// (a chunked body, whose end only MHD sees) a FIN with nothing left unread in the socket,
    /// which leaves the rest of the body in MHD's buffer. Asked only when backpressure would
    /// park the connection, so neither the header scan nor the peek is on every request's path.
    private func clientHasSentAll(_ received: Int) -> Bool {
        if let declared = declaredLength() { return received == declared }
        return unsafe cmhd_peer_finished(cmhd_connection_fd(connection.pointer)) == 1
    }

    /// `Content-Length` as libmicrohttpd reads it: ignored when `Transfer-Encoding` is present.
    private func declaredLength() -> Int? {
        var length: Int?
        for (name, value) in request.headers {
            if name.utf8.count == 17 && name.lowercased() == "transfer-encoding" { return nil }
            if name.utf8.count == 14 && name.lowercased() == "content-length" { length = Int(value) }
        }
        return length
    }

    /// Whether more bytes of this connection wait in the socket (MHD's next read takes them).
    private func moreBytesWaiting() -> Bool {
        unsafe cmhd_bytes_waiting(cmhd_connection_fd(connection.pointer)) > 0
    }

    /// Marks the body complete (MHD's final call). Returns whether this is the first final call:
    /// MHD calls again until a response is queued.
    func finishBody() -> Bool {
        let (first, waiter, gathered, inline) = state.withLock {
            s -> (Bool, CheckedContinuation<[UInt8]?, any Error>?, [UInt8]?, InlineCollector?) in
            guard !s.bodyFinished else { return (false, nil, nil, nil) }
            s.bodyFinished = true
            defer {
                s.waiter = nil
                s.inline = nil
            }
            // A parked reader gets the pieces gathered for it before the end.
            return (true, s.waiter, s.takeGathered(), s.inline)
        }
        waiter?.resume(returning: gathered)
        if let inline { inline.completion(.complete(inline.body)) }
        return first
    }

    /// The response if one is ready to queue; otherwise, when `suspendIfNotReady`, parks the
    /// connection until ``respond(_:)`` resumes it.
    func takeResponse(suspendIfNotReady: Bool) -> RawResponse? {
        state.withLock { s in
            if let response = s.pendingResponse {
                s.pendingResponse = nil
                return response
            }
            if suspendIfNotReady && !s.responded && !s.suspended {
                unsafe MHD_suspend_connection(connection.pointer)
                s.suspended = true
            }
            return nil
        }
    }

    /// MHD is done with the connection for this request (response sent, client gone, or daemon
    /// stopping). After this, nothing may touch `connection`.
    func connectionClosed() {
        let (waiter, gathered, leftover, inline) = state.withLock {
            s -> (CheckedContinuation<[UInt8]?, any Error>?, [UInt8]?, RawResponse?, InlineCollector?) in
            s.closed = true
            s.suspended = false
            let leftover = s.pendingResponse
            s.pendingResponse = nil
            defer {
                s.waiter = nil
                s.inline = nil
            }
            return (s.waiter, s.takeGathered(), leftover, s.inline)
        }
        // Pieces gathered for a parked reader come first; it meets the closed connection after.
        if let gathered { waiter?.resume(returning: gathered) } else { waiter?.resume(throwing: HTTPExchangeError.connectionClosed) }
        if let leftover { Self.dispose(leftover) }
        inline?.completion(.connectionClosed)
    }

    /// Records the streamed body queued for this exchange (see ``abortStream()``); cuts it at once
    /// if the daemon began stopping before it was queued.
    func attach(_ stream: StreamedBody) {
        let aborted = state.withLock { s in
            s.stream = stream
            return s.streamAborted
        }
        if aborted { stream.abort() }
    }

    /// The daemon is stopping: a streamed body being sent, or queued later (a response given just
    /// before the stop), is cut and its connection resumed, so it is never left suspended.
    func abortStream() {
        state.withLock { s in
            s.streamAborted = true
            return s.stream
        }?.abort()
    }

    /// Releases what a response that will never be sent holds: a file body's descriptor, a
    /// streamed body's source.
    static func dispose(_ response: RawResponse) {
        switch response.body {
        case .bytes: break
        case .file(let descriptor, _, _): closeDescriptor(descriptor)
        case .stream(_, let source): source.cancel()
        }
    }

    /// Closes a file descriptor that was meant for a response body that will never be sent.
    public static func closeDescriptor(_ descriptor: Int32) { cmhd_close_fd(descriptor) }
}

/// Body buffering limits shared by all exchanges of one daemon.
struct BodyBuffering: Sendable {
    var highWater: Int
    var lowWater: Int
    /// Most bytes queued for a parked reader, while more wait in the socket, before it is woken.
    var gatherLimit: Int
    var discardLimit: Int
}

/// A `struct MHD_Connection *`, only dereferenced by MHD. Sendable because MHD allows
/// `MHD_resume_connection` from any thread, and it is only called while the connection is
/// suspended (so it cannot have been freed).
@safe struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
