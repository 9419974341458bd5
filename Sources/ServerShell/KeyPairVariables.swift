public import Basics

/// The production key pair from the environment, `UPGATE_ACCESS_KEY` and `UPGATE_SECRET_KEY`,
/// read the same way by both servers: both set, or neither. One without the other is refused
/// (issue 10, item 2): a half-set pair used to mix with the file's development keys, so
/// biz-server signed `prod-ak:` tokens with `dev-secret-key`.
public enum KeyPairVariables {
    /// The AccessKey variable.
    public static let accessKey = "UPGATE_ACCESS_KEY"
    /// The SecretKey variable.
    public static let secretKey = "UPGATE_SECRET_KEY"

    /// The pair from `environment`, nil when neither is set (empty counts as unset).
    ///
    /// - Throws: ``ConfigurationError`` `UPGATE_ACCESS_KEY is set but UPGATE_SECRET_KEY is not:
    ///   set both, or neither` (and the other way round).
    public static func read(_ environment: [String: String]) throws(ConfigurationError)
        -> (accessKey: String, secretKey: String)?
    {
        let access = environment[accessKey].flatMap { $0.isEmpty ? nil : $0 }
        let secret = environment[secretKey].flatMap { $0.isEmpty ? nil : $0 }
        switch (access, secret) {
        case (nil, nil): return nil
        case (let access?, let secret?): return (access, secret)
        case (_?, nil): throw ConfigurationError("\(accessKey) is set but \(secretKey) is not: set both, or neither")
        case (nil, _?): throw ConfigurationError("\(secretKey) is set but \(accessKey) is not: set both, or neither")
        }
    }
}
