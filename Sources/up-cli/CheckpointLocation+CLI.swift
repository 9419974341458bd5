import Foundation
import UpClient

/// `put` keeps its resume record, when `--checkpoint` is not given, at UpClient's
/// ``CheckpointLocation/defaultPath(file:key:target:environment:)``: on Linux
/// `$XDG_STATE_HOME/upgate/<sha1>.json` (else `~/.local/state/upgate/…`).
extension CheckpointLocation {
    /// Creates the directory that will hold `path` (with intermediate directories).
    static func prepareDirectory(for path: String) throws(CLIFailure) {
        let directory = (path as NSString).deletingLastPathComponent
        guard !directory.isEmpty else { return }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw CLIFailure(.checkpointOrFile, "cannot create checkpoint directory \(directory): \(error.localizedDescription)")
        }
    }
}
