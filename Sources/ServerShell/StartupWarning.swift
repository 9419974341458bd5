public import Basics

/// Something a server can run with but should not in production, logged at warning level once
/// it starts (and again after a reload that keeps it): the development credentials, a
/// biz-server without any API client.
public struct StartupWarning: Sendable, Equatable {
    /// The log line's `msg`.
    public var message: String
    /// The log line's other fields (never a secret).
    public var fields: [String: String]

    /// Creates a warning.
    public init(_ message: String, _ fields: [String: String] = [:]) {
        self.message = message
        self.fields = fields
    }

    /// The development AccessKey/SecretKey pair is in use.
    public static let developmentKeys = StartupWarning(
        "development credentials in use",
        ["detail": "tokens are signed or accepted with the published development key pair; set \(KeyPairVariables.accessKey) and \(KeyPairVariables.secretKey) in production"])

    /// Logs the warning.
    public func log(to logger: Logger) {
        var more: [(key: String, value: Logger.Value)] = []
        for key in fields.keys.sorted() { more.append((key, .string(fields[key]!))) }
        logger.log(.warning, message, [:], more: more)
    }
}
