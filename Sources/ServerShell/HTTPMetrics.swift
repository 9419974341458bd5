public import Basics
public import HTTPKit

/// The HTTP metric families every server has, declared once: request latency by method and
/// route, and responses by route and status (`<prefix>_http_request_duration_seconds`,
/// `<prefix>_http_responses_total`).
public struct HTTPMetrics: Sendable {
    private let duration: Histogram
    private let responses: Counter

    /// Declares the families in `registry` under `prefix` (`upgate_biz`, `upgate_up`).
    public init(_ registry: Metrics, prefix: String) {
        duration = registry.histogram(
            "\(prefix)_http_request_duration_seconds", "HTTP request latency.", labels: ["method", "route"])
        responses = registry.counter(
            "\(prefix)_http_responses_total", "HTTP responses, by route and status.", labels: ["route", "status"])
    }

    /// Records one response (a ``ServiceHost`` observer).
    public func observe(_ event: ResponseEvent) {
        duration.observe(event.duration, [event.method.rawValue, event.route])
        responses.increment([event.route, String(event.status)])
    }
}
