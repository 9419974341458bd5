/// The final MIME type of an object (qiniu-protocol.md §1.3 `detectMime`).
public enum MimeResolution {
    /// The type used when nothing else is known.
    public static let fallback = "application/octet-stream"

    /// Picks the object's MIME type.
    ///
    /// * `detectMime` 0 or absent: the client's value; else the `fname` extension; else the `key`
    ///   extension; else the sniffed type; else ``fallback``.
    /// * `detectMime` non-zero: the client's value is ignored — the sniffed type; else the
    ///   `fname` extension; else the `key` extension; else ``fallback``.
    ///
    /// Empty strings count as absent. A client value of `application/octet-stream` also counts
    /// as absent: it is what SDKs send when the caller gave no type (the Python SDK's default
    /// `mime_type`, the part Content-Type of `put_data`), so honouring it would make the guesses
    /// unreachable for most uploads. [ambiguous: not verified against Kodo.]
    ///
    /// - Parameters:
    ///   - detectMime: The policy's `detectMime`.
    ///   - clientMimeType: The type the client sent (form part Content-Type, mkfile `mimeType`,
    ///     v2 `mimeType`).
    ///   - fname: The original file name.
    ///   - key: The final key.
    ///   - sniffed: ``MimeSniffer/sniff(_:)`` of the content.
    /// - Returns: The MIME type to store and report as `$(mimeType)`.
    public static func resolve(
        detectMime: Int?, clientMimeType: String?, fname: String?, key: String?, sniffed: String?
    ) -> String {
        let fromName = fname.flatMap { MimeTypes.forFileName($0) }
        let fromKey = key.flatMap { MimeTypes.forFileName($0) }
        let sniffed = sniffed.flatMap { $0.isEmpty ? nil : $0 }
        if let detectMime, detectMime != 0 {
            return sniffed ?? fromName ?? fromKey ?? fallback
        }
        return given(clientMimeType) ?? fromName ?? fromKey ?? sniffed ?? fallback
    }

    /// Whether the sniffed type can matter for this upload: to ``resolve(detectMime:clientMimeType:fname:key:sniffed:)``
    /// (with `detectMime`, or when neither the client's type nor a name's extension decides)
    /// or to a policy's `mimeLimit` (always checked against the sniffed type). When it says
    /// no, an upload whose bytes are no longer in memory (v1 blocks, v2 parts) need not read
    /// them back: on S3 that read is a LIST and a GET per upload.
    public static func needsSniffedType(
        detectMime: Int?, mimeLimit: String?, clientMimeType: String?, fname: String?, key: String?
    ) -> Bool {
        if mimeLimit != nil { return true }
        if let detectMime, detectMime != 0 { return true }
        return given(clientMimeType) == nil && fname.flatMap { MimeTypes.forFileName($0) } == nil
            && key.flatMap { MimeTypes.forFileName($0) } == nil
    }

    private static func given(_ mimeType: String?) -> String? {
        guard let mimeType, !mimeType.isEmpty else { return nil }
        let essence = mimeType.split(separator: ";", maxSplits: 1).first.map(MimeTypes.lowercasedASCII) ?? ""
        return essence.trimmingSpaces() == fallback ? nil : mimeType
    }
}

extension String {
    fileprivate func trimmingSpaces() -> Substring {
        var text = Substring(self)
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}
