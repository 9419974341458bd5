import Basics
import Foundation
import JSONText

extension UploadRecord {
    /// The JSON object biz-server answers a callback with (relayed by the up server to the
    /// uploader) and lists under `/v1/uploads`: `id`, `bucket`, `key`, `hash`, `fsize`, `mimeType`,
    /// `fname`, `endUser`, `clientId`, `traceId`, `vars`, `receivedAt` (RFC 3339, UTC, ms).
    ///
    /// Built from the stored record only, so a redelivered callback gets byte-identical JSON.
    var json: String {
        var out = "{\"id\":" + JSONText.quoted(id)
        out += ",\"bucket\":" + JSONText.quoted(bucket)
        out += ",\"key\":" + JSONText.quoted(key)
        out += ",\"hash\":" + JSONText.quoted(hash)
        out += ",\"fsize\":" + String(fsize)
        out += ",\"mimeType\":" + JSONText.quoted(mimeType)
        out += ",\"fname\":" + JSONText.quoted(fname)
        out += ",\"endUser\":" + JSONText.quoted(endUser)
        out += ",\"clientId\":" + JSONText.quoted(clientID)
        out += ",\"traceId\":" + JSONText.quoted(traceID)
        out += ",\"vars\":{"
        out += vars.sorted { $0.key < $1.key }.map { JSONText.quoted($0.key) + ":" + JSONText.quoted($0.value) }
            .joined(separator: ",")
        out += "},\"receivedAt\":" + JSONText.quoted(Self.rfc3339(milliseconds: receivedAt)) + "}"
        return out
    }

    static func rfc3339(milliseconds: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        return date.formatted(
            .iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}

extension UploadRecord {
    /// The `vars` column of both stores: the x: variables as a JSON object with sorted keys
    /// (stable text for diffs and for `biz-server migrate`'s copies).
    static func encodeVars(_ vars: [String: String]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(vars), as: UTF8.self)
    }

    /// The x: variables of a `vars` column.
    static func decodeVars(_ text: String) throws -> [String: String] {
        try JSONDecoder().decode([String: String].self, from: Data(text.utf8))
    }
}
