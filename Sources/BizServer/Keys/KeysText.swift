import Basics

/// The human-readable output of `biz-server keys` (scripts use `--json`).
enum KeysText {
    /// The new key on a line of its own, between what it is and the warning that it is shown once.
    static func created(_ created: CreatedAPIKey) -> String {
        let key = created.stored
        var about = "client \(key.clientID)"
        if !key.name.isEmpty { about += ", name \"\(key.name)\"" }
        about += key.expiresAt.map { ", expires \(time($0))" } ?? ", never expires"
        return """
            created \(key.id) (\(about)):
            \(created.key)
            This is the only time the key is shown: biz-server keeps only its SHA-256.

            """
    }

    /// One line per key under a header, columns padded to their widest value.
    static func table(_ keys: [APIKeyListing]) -> String {
        let header = ["ID", "CLIENT", "NAME", "STATE", "SOURCE", "CREATED", "EXPIRES"]
        let rows = keys.map { key in
            [
                key.id, key.clientID, key.name.isEmpty ? "-" : key.name,
                key.state == .revoked ? "revoked \(key.revokedAt.map(time) ?? "")" : key.state.rawValue,
                key.isReadOnly ? "configuration (read-only)" : "store", key.createdAt.map(time) ?? "-",
                key.expiresAt.map(time) ?? "never",
            ]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            row.enumerated().map { column, text in
                column == row.count - 1 ? text : text + String(repeating: " ", count: widths[column] - text.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    /// What `keys revoke` did (revoking again shows the first revocation's time).
    static func revoked(_ key: APIKeyListing) -> String {
        "revoked \(key.id) (client \(key.clientID)) at \(key.revokedAt.map(time) ?? "?")\n"
    }

    /// `2026-12-01T20:00:00Z`.
    static func time(_ seconds: Int64) -> String {
        let text = RFC3339.utc(millisecondsSince1970: seconds * 1000)
        return text.hasSuffix(".000Z") ? String(text.dropLast(5)) + "Z" : text
    }
}
