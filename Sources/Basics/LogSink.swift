import Foundation
import Synchronization

/// Where log lines go: standard error, line by line or in batches, or memory (tests).
///
/// A batched sink (``batchedStandardError(maxLines:maxBytes:interval:)``) is what the servers
/// use: one access-log line per request written with its own `write` call costs a system call
/// per request, so lines are gathered and written together once `maxLines` lines or `maxBytes`
/// bytes are waiting, at the latest `interval` after the first of them, before any warning or
/// error line (in order, so the log reads as it happened), on ``flush()`` and when the process
/// exits through `exit` (a SIGTERM stop included). A crash can lose at most the last `interval`.
public final class LogSink: Sendable {
    private enum Mode { case direct, batched(LineBatch), capturing }
    private let mode: Mode
    private let lines = Mutex<[String]>([])

    private init(_ mode: Mode) { self.mode = mode }

    /// Writes each line to standard error in one `write` call, so concurrent lines never interleave.
    public static let standardError = LogSink(.direct)

    /// A sink that keeps lines in memory; read them with ``capturedLines``.
    public static func memory() -> LogSink { LogSink(.capturing) }

    /// A sink writing to standard error in batches (see the type's overview). Lines are whole in
    /// every write, so they never interleave with other writers' lines.
    public static func batchedStandardError(
        maxLines: Int = 64, maxBytes: Int = 32 << 10, interval: Duration = .milliseconds(100)
    ) -> LogSink {
        let batch = LineBatch(maxLines: maxLines, maxBytes: maxBytes, interval: interval) { bytes in
            FileHandle.standardError.write(Data(bytes))
        }
        LineBatch.flushAtExit(batch)
        return LogSink(.batched(batch))
    }

    /// The lines written so far (memory sinks only; empty otherwise).
    public var capturedLines: [String] {
        lines.withLock { $0 }
    }

    /// Writes what a batched sink holds now; a no-op for the others.
    public func flush() {
        if case .batched(let batch) = mode { batch.flush() }
    }

    /// Takes one complete line (UTF-8, ending in a newline). `urgent` lines (warnings, errors)
    /// are written before this returns, after the lines waiting before them.
    func write(_ line: [UInt8], urgent: Bool) {
        switch mode {
        case .direct: FileHandle.standardError.write(Data(line))
        case .batched(let batch): batch.append(line, urgent: urgent)
        case .capturing:
            let text = String(decoding: line, as: UTF8.self)
            lines.withLock { $0.append(text) }
        }
    }
}
