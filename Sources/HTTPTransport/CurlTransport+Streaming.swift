#if os(Linux)  // NativeCurl is a Linux-only dependency (Package.swift)
internal import NativeCurl
import Synchronization

extension CurlTransport: StreamingHTTPTransport {
    /// Bytes held per direction of a streamed exchange: between the producer and the socket, and
    /// between the socket and the reader. Each write or read moves at most about this much.
    static let streamWindow = 256 << 10

    /// Sends `request` with `body` produced while it is sent, and returns at the response head;
    /// see ``StreamingHTTPTransport/stream(_:body:)``.
    ///
    /// The producer runs as a child task: it pulls a piece, writes it into the pipe (waiting while
    /// the window is full) and stops when the pieces end, fail, or the transfer ends. A streamed
    /// body cannot be rewound, so libcurl's silent resend on a dead keep-alive connection fails
    /// instead (a transport error the caller retries with a fresh body).
    public func stream(_ request: TransportRequest, body: StreamedRequestBody?) async throws -> StreamingResponse {
        var curlRequest = curlRequest(for: request)
        let pipe = body.map { _ in CurlBodyPipe(window: Self.streamWindow) }
        if let body, let pipe { curlRequest.body = .stream(pipe, length: body.length) }
        let producerFailure = ProducerFailure()
        let multi = self.multi
        return try await withThrowingTaskGroup(of: Void.self) { group in
            if let body, let pipe {
                group.addTask {
                    if let error = await Self.produce(body, into: pipe) { producerFailure.error.withLock { $0 = error } }
                }
            }
            do throws(CurlError) {
                let (head, responsePipe) = try await multi.open(curlRequest, window: Self.streamWindow)
                let response = TransportResponse(status: head.status, headers: head.headers.map { ($0.name, $0.value) })
                let body = ResponseBody(
                    next: { () async throws(TransportError) -> [UInt8]? in
                        do throws(CurlError) { return try await responsePipe.next() } catch {
                            throw Self.transportError(error)
                        }
                    },
                    cancel: { responsePipe.cancel() })
                return StreamingResponse(head: response, body: body)
            } catch {
                // The producer's own failure explains the aborted transfer better than libcurl can.
                if let failure = producerFailure.error.withLock({ $0 }) { throw failure }
                throw Self.transportError(error)
            }
        }
    }

    /// Feeds `body` into `pipe`; returns the producer's error, if any (the pipe is failed then).
    private static func produce(_ body: StreamedRequestBody, into pipe: CurlBodyPipe) async -> (any Error)? {
        var written: Int64 = 0
        do {
            for try await piece in body.pieces {
                written += Int64(piece.count)
                guard written <= body.length else {
                    let error = TransportError(.invalidRequest, "request body longer than its declared \(body.length) bytes")
                    pipe.fail(error.message)
                    return error
                }
                try await pipe.write(piece)
            }
            pipe.finish()
            return nil
        } catch is CurlError {
            // The transfer ended first: its own error is the one to report.
            return nil
        } catch {
            pipe.fail("\(error)")
            return error
        }
    }
}

/// What the producer of a streamed body threw, kept for the caller.
private final class ProducerFailure: Sendable {
    let error = Mutex<(any Error)?>(nil)
}
#endif
