/// What ``HTTPExchange/collectInline(limit:then:)`` delivers.
public enum InlineBody: Sendable {
    /// The whole body.
    case complete([UInt8])
    /// More than the limit arrived; the rest will be discarded once a response is given.
    case tooLarge
    /// The client disconnected before the body was complete; nobody will read a response.
    case connectionClosed
}

/// Why reading a request body stopped early.
public enum HTTPExchangeError: Error, Sendable {
    /// The client disconnected before the body was complete.
    case connectionClosed
    /// A response was already sent, so the rest of the body is being discarded.
    case responseAlreadySent
}
