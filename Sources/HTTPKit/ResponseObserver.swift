public import Basics

/// Middleware that hands every ``ResponseEvent`` to a closure, e.g. to update metrics.
public struct ResponseObserver: Middleware {
    private let observe: @Sendable (ResponseEvent) -> Void

    /// Calls `observe` after each response; it must be fast and must not throw.
    public init(_ observe: @escaping @Sendable (ResponseEvent) -> Void) { self.observe = observe }

    /// Calls the closure.
    public func report(_ event: ResponseEvent, logger: Logger) { observe(event) }
}
