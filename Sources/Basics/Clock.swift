import Foundation

/// Wall-clock time in Unix seconds, injected wherever time matters (token deadlines, replay
/// windows, rate limits) so tests can pin it. The pure core never reads a clock itself.
public protocol WallClock: Sendable {
    /// Seconds since 1970-01-01T00:00:00Z.
    func now() -> Double
}

extension WallClock {
    /// Whole seconds since the epoch, rounded down.
    public var unixSeconds: Int64 { Int64(now().rounded(.down)) }
}

/// The system clock.
public struct SystemClock: WallClock {
    /// Creates the system clock.
    public init() {}
    /// Seconds since the epoch, from `Date()`.
    public func now() -> Double { Date().timeIntervalSince1970 }
}
