import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Unbuffered line output: every line is one `write(2)`, so JSON lines reach a pipe as they happen
/// (`print` is block-buffered on a pipe) and lines from the progress thread never interleave.
enum Console {
    /// Writes `text` and a newline to standard output.
    static func out(_ text: String) { write(text + "\n", to: .standardOutput) }

    /// Writes `text` and a newline to standard error.
    static func err(_ text: String) { write(text + "\n", to: .standardError) }

    /// Writes `text` as is to standard output (lines that already end in a newline).
    static func outRaw(_ text: String) { write(text, to: .standardOutput) }

    /// Writes `text` as is to standard error (the progress bar's carriage returns).
    static func errRaw(_ text: String) { write(text, to: .standardError) }

    private static func write(_ text: String, to handle: FileHandle) {
        try? handle.write(contentsOf: Data(text.utf8))
    }

    /// Whether file descriptor `fd` (1 stdout, 2 stderr) is a terminal.
    static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }
}
