/// `EncodedEntryURI = B64(bucket ":" key)`, or `B64(bucket)` without a key (qiniu-protocol.md §10.6).
public enum EncodedEntryURI {
    /// Encodes a bucket and optional key.
    ///
    /// - Parameters:
    ///   - bucket: Bucket name.
    ///   - key: Object key; `nil` encodes the bucket alone.
    /// - Returns: URL-safe base64 of `bucket:key` (or `bucket`), padded.
    public static func encode(bucket: String, key: String?) -> String {
        guard let key else { return URLSafeBase64.encode(bucket.utf8) }
        return URLSafeBase64.encode((bucket + ":" + key).utf8)
    }

    /// Decodes an entry; the bucket ends at the first `:` (keys may contain `:`).
    ///
    /// - Parameter text: The encoded entry.
    /// - Returns: Bucket and key (`nil` when no `:`), or `nil` for bad base64, invalid UTF-8 or
    ///   an empty bucket.
    public static func decode(_ text: some StringProtocol) -> (bucket: String, key: String?)? {
        guard let bytes = URLSafeBase64.decode(text), let entry = String(validating: bytes, as: UTF8.self) else {
            return nil
        }
        guard let colon = entry.utf8.firstIndex(of: UInt8(ascii: ":")) else {
            return entry.isEmpty ? nil : (entry, nil)
        }
        let bucket = String(entry[..<colon])
        guard !bucket.isEmpty else { return nil }
        // By bytes: `index(after:)` would step over a combining mark joined to the colon.
        return (bucket, String(decoding: entry.utf8[entry.utf8.index(after: colon)...], as: UTF8.self))
    }
}
