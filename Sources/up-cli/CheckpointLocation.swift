import Foundation
import UpCore

/// Where `put` keeps its resume record when `--checkpoint` is not given:
/// `$XDG_STATE_HOME/upgate/<sha1>.json` (else `~/.local/state/upgate/…`), where `<sha1>` is the
/// SHA-1 of the absolute file path, the key and the target (biz URL or up hosts), so the same
/// command finds the same record and different uploads never share one.
enum CheckpointLocation {
    /// The default directory.
    static func directory(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return state + "/upgate"
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.local/state/upgate"
    }

    /// The default checkpoint file for one upload.
    static func defaultPath(file absolutePath: String, key: String?, target: String, environment: [String: String]) -> String {
        directory(environment: environment) + "/" + name(file: absolutePath, key: key, target: target) + ".json"
    }

    /// Hex SHA-1 of the three parts, NUL-separated (no part can contain NUL; a missing key differs
    /// from an empty one).
    static func name(file: String, key: String?, target: String) -> String {
        var material = Array("upgate-checkpoint-v1\u{0}\(file)\u{0}".utf8)
        material += key.map { Array("k:\($0)".utf8) } ?? Array("nokey".utf8)
        material += Array("\u{0}\(target)".utf8)
        // The etag hasher keeps the SHA-1 of each 4 MiB block: for this short input it is the SHA-1.
        var hasher = EtagHasher()
        hasher.update(material)
        let digest = hasher.finalize().blockDigests[0]
        let hex = Array("0123456789abcdef".utf8)
        return String(decoding: digest.flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 0x0F)]] }, as: UTF8.self)
    }

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
