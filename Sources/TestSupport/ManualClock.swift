public import Basics
import Synchronization

/// A wall clock that only moves when a test moves it.
public final class ManualClock: WallClock {
    private let current: Mutex<Double>

    /// Starts at `start` Unix seconds.
    public init(_ start: Double = 1_900_000_000) { current = Mutex(start) }

    /// The pinned time.
    public func now() -> Double { current.withLock { $0 } }

    /// Moves the clock by `seconds` (may be negative, to model a clock stepping back).
    public func advance(by seconds: Double) { current.withLock { $0 += seconds } }

    /// Sets the clock to `seconds`.
    public func set(_ seconds: Double) { current.withLock { $0 = seconds } }
}
