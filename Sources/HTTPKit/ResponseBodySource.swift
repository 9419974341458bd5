/// The producer of a streamed response body (``Response/Body/stream(length:source:)``): the
/// server pulls pieces while it sends them, a bounded window ahead of the client.
///
/// ``next()`` is called from one task at a time, only when the server has room for more; it
/// returns pieces of any size (keep them at most about 1 MiB: the window holds one piece past
/// its limit) and `nil` at the end. Whatever it produces past the declared length is dropped.
///
/// If it throws, or returns `nil` before the declared length, the server closes the connection
/// after the bytes already produced: the status and `Content-Length` are on the wire by then, so
/// the client sees a body shorter than announced (HTTP/1.1 has no other way to fail mid-body).
public protocol ResponseBodySource: Sendable {
    /// The next piece, or `nil` at the end.
    func next() async throws -> [UInt8]?

    /// Called once if the body is dropped before ``next()`` reached the declared length, ended or
    /// threw: the client went away, the server is stopping, or the response was never sent
    /// (another answer won, a `HEAD`). Release what the source holds; a ``next()`` in flight is
    /// also cancelled as a task.
    func cancel()
}
