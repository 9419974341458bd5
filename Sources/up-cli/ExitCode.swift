import UpClient

/// The process exit statuses, as documented in `--help`.
enum ExitCode: Int32 {
    /// Uploaded (or the command did what it was asked).
    case ok = 0
    /// The upload failed: the server refused it, or the network (up host or biz-server) failed
    /// after retries.
    case uploadFailed = 1
    /// Bad command line.
    case usage = 2
    /// Integrity: a checksum or the final hash did not match the bytes sent.
    case integrity = 3
    /// The file or the checkpoint cannot be used (missing, unreadable, changed while uploading, locked).
    case checkpointOrFile = 4
    /// No usable upload token: biz-server refused the API key, or the up host refused the token
    /// (401, or 403 for a key outside the token's scope).
    case token = 5
    /// Stored, but the app's callback failed (579); up-server retries the callback.
    case callbackFailed = 6
    /// Paused by Ctrl-C; the checkpoint is kept.
    case paused = 130

    /// The status for an upload error.
    init(_ error: UploadError) {
        switch error.kind {
        case .paused, .aborted: self = .paused
        case .server, .network: self = .uploadFailed
        case .checkpoint, .file, .fileChanged: self = .checkpointOrFile
        case .integrity: self = .integrity
        case .token: self = .token
        case .callbackFailed: self = .callbackFailed
        }
    }
}

/// A failure that ends the command with `code` after printing `message` on standard error.
struct CLIFailure: Error {
    var code: ExitCode
    var message: String

    init(_ code: ExitCode, _ message: String) {
        self.code = code
        self.message = message
    }

    static func usage(_ message: String) -> CLIFailure { CLIFailure(.usage, message) }
}
