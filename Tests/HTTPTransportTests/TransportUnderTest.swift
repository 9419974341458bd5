import HTTPTransport
import Testing

/// The transports the contract tests run against: every test parameterised with this must pass
/// for both. Tests of one transport's own knobs (libcurl's low-speed limit and connection count,
/// pacing, idle CPU) stay with that transport; ``URLSessionTransport``'s documented differences
/// are asserted in `URLSessionTransportTests`.
enum TransportUnderTest: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// ``CurlTransport`` (libcurl's multi interface).
    case curl
    /// ``URLSessionTransport`` (FoundationNetworking on Linux; the Apple-platform transport).
    case urlSession

    /// A fresh transport of this kind with its default configuration.
    func make() throws -> any StreamingHTTPTransport {
        switch self {
        case .curl: try CurlTransport()
        case .urlSession: URLSessionTransport()
        }
    }

    var testDescription: String { rawValue }
}
