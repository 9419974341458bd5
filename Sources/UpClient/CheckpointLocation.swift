import Foundation
import NativeCrypto

/// Where checkpoints live when the caller does not name a file: a directory the process may
/// write on every platform, including inside an iOS/macOS app sandbox (no `/tmp`, no working
/// directory assumed), and one file per upload in it.
///
/// - Apple platforms: ``applicationSupportDirectory()``, i.e.
///   `<Application Support>/upgate/checkpoints`. Inside a sandbox `Application Support` is the
///   app's own container (`Library/Application Support`), which survives relaunches and app
///   updates and is not purged like `Caches` or `tmp`.
/// - Linux: ``stateDirectory(environment:)``, i.e. `$XDG_STATE_HOME/upgate` (when absolute),
///   else `~/.local/state/upgate` — what up-cli has always used.
///
/// File names are the SHA-1 of the absolute file path, the key and the target (biz URL or up
/// hosts), so the same upload finds the same checkpoint and different uploads never share one.
/// An app usually calls ``defaultPath(file:key:target:environment:)`` and passes the result as
/// ``UploadRequest/checkpointPath``; the directory is created on the first checkpoint write.
public enum CheckpointLocation {
    /// The platform's default directory (see the type's notes); `environment` (default: the
    /// process's) is read on Linux only.
    public static func defaultDirectory(environment: [String: String]? = nil) -> String {
        #if os(Linux)
        stateDirectory(environment: environment ?? ProcessInfo.processInfo.environment)
        #else
        applicationSupportDirectory()
        #endif
    }

    /// `<Application Support>/upgate/checkpoints` for the current user (the app's container when
    /// sandboxed). The default on Apple platforms; on Linux Foundation maps it to
    /// `$XDG_DATA_HOME` (`~/.local/share`), which is how it is tested here.
    public static func applicationSupportDirectory() -> String {
        let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent("Library/Application Support")
        return base.appendingPathComponent("upgate").appendingPathComponent("checkpoints").path
    }

    /// `$XDG_STATE_HOME/upgate` when that is absolute, else `$HOME/.local/state/upgate`. The
    /// default on Linux.
    public static func stateDirectory(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return state + "/upgate"
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.local/state/upgate"
    }

    /// The checkpoint file for one upload in ``defaultDirectory(environment:)``:
    /// `<directory>/<name>.json` (see ``name(file:key:target:)``).
    ///
    /// - Parameters:
    ///   - file: The absolute path of the file uploaded.
    ///   - key: The key asked for (nil: the policy names the object).
    ///   - target: Where it goes: the biz-server URL or the up hosts, as text.
    public static func defaultPath(
        file: String, key: String?, target: String, environment: [String: String]? = nil
    ) -> String {
        defaultDirectory(environment: environment) + "/" + name(file: file, key: key, target: target) + ".json"
    }

    /// Hex SHA-1 of the three parts, NUL-separated (no part can contain NUL; a missing key
    /// differs from an empty one).
    public static func name(file: String, key: String?, target: String) -> String {
        var material = Array("upgate-checkpoint-v1\u{0}\(file)\u{0}".utf8)
        material += key.map { Array("k:\($0)".utf8) } ?? Array("nokey".utf8)
        material += Array("\u{0}\(target)".utf8)
        return Hex.encode(SHA1.hash(material))
    }
}
