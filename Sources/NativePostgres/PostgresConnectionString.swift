internal import CLibPQ

/// Where to connect: a libpq connection URI (`postgresql://upgate@127.0.0.1:5432/upgate`) or
/// keyword/value string (`host=127.0.0.1 dbname=upgate`), checked when it is created.
///
/// The password never comes from here: a string carrying one (`postgresql://u:secret@…` or
/// `password=…`) is refused, because configuration files and command lines end up in logs,
/// process listings and bug reports. libpq reads it from `PGPASSWORD`, or from a password file
/// (`passfile=/path` in the string, `PGPASSFILE`, or `~/.pgpass`; libpq ignores a file that
/// others can read).
///
/// All other libpq keywords pass through unchanged (PostgreSQL manual §34.1.2), as do the
/// `PG*` environment variables for keywords the string leaves out.
public struct PostgresConnectionString: Sendable, Hashable, CustomStringConvertible {
    /// The string as given; passed to libpq as its `dbname` keyword, which libpq expands.
    public let value: String
    /// What the string sets, for logs: e.g. `upgate@127.0.0.1:5432/upgate`.
    public let description: String

    /// Checks `value` with libpq's own parser.
    ///
    /// - Throws: ``PostgresError/Code/configuration`` with one actionable line when libpq cannot
    ///   parse it or it carries a password.
    public init(_ value: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = unsafe PQconninfoParse(value, &error) else {
            let message = unsafe error.map { unsafe String(cString: $0) } ?? "out of memory"
            unsafe PQfreemem(error)
            throw PostgresError(
                .configuration, message: "invalid PostgreSQL connection string: \(Self.trimmed(message))")
        }
        defer { unsafe PQconninfoFree(options) }
        var settings: [String: String] = [:]
        var option = unsafe options
        while let keyword = unsafe option.pointee.keyword {
            if let setting = unsafe option.pointee.val {
                unsafe settings[String(cString: keyword)] = unsafe String(cString: setting)
            }
            unsafe option += 1
        }
        guard settings["password"] == nil else {
            throw PostgresError(
                .configuration,
                message: "the PostgreSQL connection string carries a password: remove it and set PGPASSWORD "
                    + "or a password file (passfile=/path, PGPASSFILE or ~/.pgpass) instead")
        }
        self.value = value
        let user = settings["user"].map { "\($0)@" } ?? ""
        let host = settings["hostaddr"] ?? settings["host"] ?? "(default host)"
        let port = settings["port"].map { ":\($0)" } ?? ""
        description = "\(user)\(host)\(port)/\(settings["dbname"] ?? "(default database)")"
    }

    /// libpq's messages end with a newline and may span lines ("…failed: Connection refused\n\tIs
    /// the server running…"): one line for the log.
    static func trimmed(_ message: String) -> String {
        message.split(whereSeparator: \.isNewline).map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
            .joined(separator: " ")
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        var text = self
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return text
    }
}
