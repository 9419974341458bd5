import Foundation

/// What a one-shot subcommand (`biz-server keys`, `biz-server migrate`, `up-server migrate`)
/// printed and its exit status: returned by the command's `run` so tests read it, and written
/// out by ``exit()`` in the executable.
public struct CommandOutcome: Sendable, Equatable {
    /// The exit status.
    public var status: Int32
    /// Standard output.
    public var output: String = ""
    /// Standard error.
    public var error: String = ""

    /// An outcome.
    public init(status: Int32, output: String = "", error: String = "") {
        self.status = status
        self.output = output
        self.error = error
    }

    /// Writes ``output`` and ``error`` to their streams and exits with ``status``.
    public func exit() -> Never {
        FileHandle.standardOutput.write(Data(output.utf8))
        FileHandle.standardError.write(Data(error.utf8))
        Foundation.exit(status)
    }
}
