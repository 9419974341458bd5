/// The version every Upgate binary prints for `--version`, one constant so the three agree.
public enum UpgateVersion {
    /// Semantic version of this source tree.
    public static let string = "0.2.0-dev"

    /// `<program> <version>`, the line `--version` prints.
    public static func line(for program: String) -> String { "\(program) \(string)" }
}
