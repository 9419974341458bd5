public import Basics
public import NativePostgres

/// The `"database"` setting both servers share: absent → the embedded SQLite files in the data
/// directory; a `postgresql://` URL → that PostgreSQL database (issue 12).
///
/// The password never comes from the URL (configuration files end up in logs and bug reports):
/// libpq takes it from `PGPASSWORD` or the passfile (`~/.pgpass`, `PGPASSFILE`).
public enum DatabaseSetting {
    /// Reads `"database"` from `file`; the environment's `variable` (when set and not empty) wins.
    public static func read(
        _ file: ConfigurationObject, variable: String, environment: [String: String]
    ) throws(ConfigurationError) -> String? {
        let configured = try file.string("database")  // read even when overridden: the strict reader counts it
        if let value = environment[variable], !value.isEmpty { return value }
        return configured
    }

    /// The checked connection string of `database`, nil for SQLite (nil `database`).
    ///
    /// Strict: only a `postgresql://` (or `postgres://`) URL that libpq parses, without a password.
    /// - Throws: `ConfigurationError` naming the key and what to do.
    public static func connectionString(_ database: String?) throws(ConfigurationError) -> PostgresConnectionString? {
        guard let database else { return nil }
        guard database.hasPrefix("postgresql://") || database.hasPrefix("postgres://") else {
            // Only what precedes "://" is echoed: the rest may hold a password.
            let scheme = database.contains("://") ? String(database.prefix(while: { $0 != ":" })) + "://…" : "no URL"
            throw ConfigurationError(
                "database must be a postgresql:// URL (e.g. postgresql://upgate@127.0.0.1:5432/upgate), got \(scheme)")
        }
        do {
            return try PostgresConnectionString(database)
        } catch let error as PostgresError {
            throw ConfigurationError("database: \(error.message)")
        } catch {
            throw ConfigurationError("database: \(error)")
        }
    }
}
