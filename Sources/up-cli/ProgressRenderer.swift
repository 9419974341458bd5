import Basics
import Foundation
import NativeOS
import Synchronization
import UpClient

/// Shows upload progress: a single updating line on a terminal's standard error (percent, bar,
/// bytes, rate, ETA), fitted to the terminal's width at every redraw; or JSON lines on standard
/// output (`{"event":"progress","bytesSent":…,"totalBytes":…}`) at most 5 per second. Called from
/// the client's progress task; safe from any thread.
///
/// Reports arriving faster than the interval are not dropped but held: a ticker shows the newest
/// one when the interval is up, so the display never lags behind by more than one interval.
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
    private let ticker = Mutex<Task<Void, Never>?>(nil)

    private struct State {
        var lastEmit: ContinuousClock.Instant?
        var lastShown: UploadProgress?
        var pending: UploadProgress?
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

    /// Records `progress`; shows it now, or when the interval since the last one is up.
    func update(_ progress: UploadProgress) {
        guard mode != .silent else { return }
        let now = clock.now
        let output: String? = state.withLock { state in
            guard !state.finished else { return nil }
            // One sample per 50 ms is plenty for a rate over the last seconds.
            if state.samples.last.map({ now - $0.0 >= .milliseconds(50) }) ?? true {
                state.samples.append((now, progress.bytesSent))
            }
            while let first = state.samples.first, now - first.0 > .seconds(5), state.samples.count > 2 {
                state.samples.removeFirst()
            }
            if let last = state.lastEmit, now - last < interval {
                state.pending = progress
                return nil
            }
            return render(progress, now: now, state: &state)
        }
        startTicker()
        if let output { write(output) }
    }

    /// Stops drawing. With `completed` (the upload succeeded), the newest report is shown first
    /// and the bar ends at 100 % with the average rate (none for an empty file); then the bar's
    /// line is ended so later messages start on a fresh one.
    func finish(completed total: Int64? = nil, seconds: Double = 0) {
        ticker.withLock { $0?.cancel() }
        let now = clock.now
        let output = state.withLock { state -> String in
            guard !state.finished else { return "" }
            var out = ""
            if let total {
                let final = UploadProgress(bytesSent: total, totalBytes: total, blocks: state.pending?.blocks ?? state.lastShown?.blocks)
                if mode == .bar {
                    let rate = total > 0 && seconds > 0 ? Double(total) / seconds : nil
                    state.lineShown = true
                    out += "\r\u{1B}[2K" + Self.barLine(final, rate: rate, width: Self.terminalWidth())
                } else if state.lastShown?.bytesSent != total {
                    out += render(final, now: now, state: &state) ?? ""
                }
            }
            state.finished = true
            if state.lineShown { out += "\n" }
            state.lineShown = false
            return out
        }
        if !output.isEmpty { write(output) }
    }

    /// The text for `progress` (marks it shown); nil when there is nothing new to show.
    private func render(_ progress: UploadProgress, now: ContinuousClock.Instant, state: inout State) -> String? {
        state.pending = nil
        guard mode == .bar || progress.bytesSent != state.lastShown?.bytesSent else { return nil }
        state.lastEmit = now
        state.lastShown = progress
        switch mode {
        case .json:
            return "{\"event\":\"progress\",\"bytesSent\":\(progress.bytesSent),\"totalBytes\":\(progress.totalBytes)"
                + Self.blocksJSON(progress.blocks) + "}\n"
        case .bar:
            state.lineShown = true
            return "\r\u{1B}[2K" + Self.barLine(progress, rate: Self.rate(state.samples), width: Self.terminalWidth())
        case .silent:
            return nil
        }
    }

    /// Shows the held report every interval (started by the first update, ended by ``finish``).
    private func startTicker() {
        ticker.withLock { ticker in
            guard ticker == nil else { return }
            ticker = Task.detached { [self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    let now = clock.now
                    let output: String? = state.withLock { state in
                        guard !state.finished, let pending = state.pending else { return nil }
                        return render(pending, now: now, state: &state)
                    }
                    if let output { write(output) }
                }
            }
        }
    }

    private func write(_ output: String) {
        if mode == .json { Console.outRaw(output) } else { Console.errRaw(output) }
    }

    private static func blocksJSON(_ blocks: [UploadProgress.BlockState]?) -> String {
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

    /// Columns of the terminal on standard error now (it may have been resized), else `COLUMNS`,
    /// else 80.
    static func terminalWidth() -> Int {
        TerminalSize.columns(of: 2) ?? ProcessInfo.processInfo.environment["COLUMNS"].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
            ?? 80
    }

    /// Bytes per second over the samples kept, nil until there is a span to measure.
    static func rate(_ samples: [(ContinuousClock.Instant, Int64)]) -> Double? {
        guard let first = samples.first, let last = samples.last else { return nil }
        let span = (last.0 - first.0).seconds
        guard span >= 0.2 else { return nil }
        return Double(last.1 - first.1) / span
    }

    /// ` 42% [=====     ] 27.0 MiB / 64.0 MiB  12.3 MiB/s  ETA 3s`, shortened to fit in
    /// `width - 1` columns (writing the last column makes some terminals wrap): the bar narrows
    /// (30 to 10 columns), then ETA, rate and sizes are dropped, then the bar.
    static func barLine(_ progress: UploadProgress, rate: Double?, width: Int) -> String {
        let limit = max(4, width - 1)
        let sent = progress.bytesSent, total = progress.totalBytes
        let fraction = total > 0 ? min(1, Double(sent) / Double(total)) : 1
        let percentNumber = String(Int(fraction * 100))
        let percent = String(repeating: " ", count: max(0, 3 - percentNumber.count)) + percentNumber + "%"
        var tail = ["\(ByteSize.format(sent)) / \(ByteSize.format(total))"]
        if let rate, rate > 0, total > 0 {
            tail.append("\(ByteSize.format(Int64(rate)))/s")
            if sent < total { tail.append("ETA \(formatSeconds(Double(total - sent) / rate))") }
        }
        for count in stride(from: tail.count, through: 0, by: -1) {
            let text = tail.prefix(count).joined(separator: "  ")
            let barWidth = min(30, limit - percent.count - (text.isEmpty ? 3 : 4 + text.count))
            guard barWidth >= 10 else { continue }
            let filled = min(barWidth, Int(fraction * Double(barWidth)))
            let bar = String(repeating: "=", count: filled) + String(repeating: " ", count: barWidth - filled)
            return percent + " [" + bar + "]" + (text.isEmpty ? "" : " " + text)
        }
        for count in stride(from: tail.count, through: 0, by: -1) {
            let line = ([percent] + tail.prefix(count)).joined(separator: " ")
            if line.count <= limit { return line }
        }
        return percent
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
