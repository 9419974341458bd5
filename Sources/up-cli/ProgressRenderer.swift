import Basics
import Synchronization
import UpClient

/// Shows upload progress: a single updating line on a terminal's standard error (percent, bytes,
/// rate, ETA), or JSON lines on standard output (`{"event":"progress","bytesSent":…,"totalBytes":…}`)
/// at most 5 per second. Called from the client's progress thread; safe from any thread.
final class ProgressRenderer: Sendable {
    enum Mode: Sendable {
        /// The updating line on standard error.
        case bar
        /// JSON lines on standard output.
        case json
        /// Nothing (human output without a terminal on standard error).
        case silent
    }

    let mode: Mode
    private let state: Mutex<State>
    private let clock = ContinuousClock()

    private struct State {
        var lastEmit: ContinuousClock.Instant?
        var lastBytes: Int64 = -1
        /// Recent (time, bytes) samples for the rate: the last few seconds.
        var samples: [(ContinuousClock.Instant, Int64)] = []
        var lineShown = false
        var finished = false
    }

    init(mode: Mode) {
        self.mode = mode
        state = Mutex(State())
    }

    /// Least time between two JSON progress lines (5 per second) and between two bar redraws.
    private var interval: Duration { mode == .json ? .milliseconds(200) : .milliseconds(100) }

    /// Records `progress` and draws or emits it unless one was shown less than an interval ago.
    func update(_ progress: UploadProgress) {
        guard mode != .silent else { return }
        let now = clock.now
        let output: String? = state.withLock { state in
            guard !state.finished else { return nil }
            state.samples.append((now, progress.bytesSent))
            while let first = state.samples.first, now - first.0 > .seconds(5), state.samples.count > 2 {
                state.samples.removeFirst()
            }
            let complete = progress.bytesSent >= progress.totalBytes
            if let last = state.lastEmit, now - last < interval, !(complete && mode == .bar) { return nil }
            guard progress.bytesSent != state.lastBytes else { return nil }
            state.lastEmit = now
            state.lastBytes = progress.bytesSent
            switch mode {
            case .json:
                return "{\"event\":\"progress\",\"bytesSent\":\(progress.bytesSent),\"totalBytes\":\(progress.totalBytes)"
                    + blocksJSON(progress.blocks) + "}"
            case .bar:
                state.lineShown = true
                return "\r\u{1B}[2K" + Self.barLine(progress, rate: Self.rate(state.samples))
            case .silent:
                return nil
            }
        }
        guard let output else { return }
        if mode == .json { Console.out(output) } else { Console.errRaw(output) }
    }

    /// Stops drawing; ends the bar's line so later messages start on a fresh one.
    func finish() {
        let endLine = state.withLock { state -> Bool in
            state.finished = true
            defer { state.lineShown = false }
            return state.lineShown
        }
        if endLine { Console.errRaw("\n") }
    }

    private func blocksJSON(_ blocks: [UploadProgress.BlockState]?) -> String {
        guard let blocks else { return "" }
        var done = 0, uploading = 0
        for block in blocks {
            switch block {
            case .done: done += 1
            case .uploading: uploading += 1
            case .pending: break
            }
        }
        return ",\"blocks\":{\"total\":\(blocks.count),\"done\":\(done),\"uploading\":\(uploading)}"
    }

    /// Bytes per second over the samples kept, nil until there is a span to measure.
    static func rate(_ samples: [(ContinuousClock.Instant, Int64)]) -> Double? {
        guard let first = samples.first, let last = samples.last else { return nil }
        let span = (last.0 - first.0).seconds
        guard span >= 0.2 else { return nil }
        return Double(last.1 - first.1) / span
    }

    /// ` 42%  27.0 MiB / 64.0 MiB  12.3 MiB/s  ETA 3s`.
    static func barLine(_ progress: UploadProgress, rate: Double?) -> String {
        let total = max(progress.totalBytes, 1)
        let percent = Int(Double(progress.bytesSent) * 100 / Double(total))
        let width = 24
        let filled = min(width, Int(Double(progress.bytesSent) * Double(width) / Double(total)))
        var line = String(repeating: " ", count: max(0, 3 - String(percent).count)) + "\(percent)% ["
        line += String(repeating: "=", count: filled) + String(repeating: " ", count: width - filled) + "] "
        line += "\(ByteSize.format(progress.bytesSent)) / \(ByteSize.format(progress.totalBytes))"
        if let rate, rate > 0 {
            line += "  \(ByteSize.format(Int64(rate)))/s"
            let remaining = Double(progress.totalBytes - progress.bytesSent) / rate
            line += "  ETA \(formatSeconds(remaining))"
        }
        return line
    }

    /// `3s`, `2m05s`, `1h02m`.
    static func formatSeconds(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "?" }
        let whole = Int(seconds.rounded(.up))
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return "\(whole / 60)m" + pad(whole % 60) + "s" }
        return "\(whole / 3600)h" + pad(whole % 3600 / 60) + "m"
    }

    private static func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
