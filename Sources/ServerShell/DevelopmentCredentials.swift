/// The credentials of the development configuration in `Config/` (published in the repository,
/// so anyone can sign with them). A server that runs with any of them says so at start-up
/// (``StartupWarning``).
public enum DevelopmentCredentials {
    /// The AccessKey of `Config/biz-server.json` and `Config/up-server.json`.
    public static let accessKey = "dev-access-key"
    /// Their SecretKey.
    public static let secretKey = "dev-secret-key"
    /// The demo client's API key in `Config/biz-server.json`.
    public static let apiKey = "dev-api-key"
    /// Hex SHA-256 of ``apiKey``, the form in which the file holds it.
    public static let apiKeySHA256 = "6e1e4e1b8f8b36d08901cdb51b97841dfe20f5efd2fd2fd00768971408c46274"

    /// Whether the pair is (partly) the development one.
    public static func isDevelopment(accessKey: String, secretKey: String) -> Bool {
        accessKey == self.accessKey || secretKey == self.secretKey
    }
}
