/// File extension ↔ MIME type for common types: the `fname` / `key` extension guesses of
/// `detectMime` (qiniu-protocol.md §1.3) and `$(ext)` from a MIME type (§2, with the leading dot).
///
/// One table; where a type has several extensions the first listed is the one ``extension(for:)``
/// returns (`image/jpeg` → `.jpg`, not `.jpeg`).
public enum MimeTypes {
    /// `(extension without dot, MIME type)`, canonical extension of each type first.
    static let table: [(ext: String, mime: String)] = [
        // Images
        ("jpg", "image/jpeg"), ("jpeg", "image/jpeg"), ("jpe", "image/jpeg"), ("png", "image/png"),
        ("gif", "image/gif"), ("webp", "image/webp"), ("bmp", "image/bmp"), ("tif", "image/tiff"),
        ("tiff", "image/tiff"), ("svg", "image/svg+xml"), ("ico", "image/x-icon"), ("heic", "image/heic"),
        ("heif", "image/heif"), ("avif", "image/avif"),
        // Audio
        ("mp3", "audio/mpeg"), ("wav", "audio/wav"), ("ogg", "audio/ogg"), ("oga", "audio/ogg"),
        ("flac", "audio/flac"), ("aac", "audio/aac"), ("m4a", "audio/mp4"), ("opus", "audio/opus"),
        ("amr", "audio/amr"), ("mid", "audio/midi"), ("midi", "audio/midi"),
        // Video
        ("mp4", "video/mp4"), ("m4v", "video/mp4"), ("mov", "video/quicktime"), ("webm", "video/webm"),
        ("mkv", "video/x-matroska"), ("avi", "video/x-msvideo"), ("flv", "video/x-flv"), ("3gp", "video/3gpp"),
        ("wmv", "video/x-ms-wmv"), ("mpeg", "video/mpeg"), ("mpg", "video/mpeg"), ("ts", "video/mp2t"),
        ("m3u8", "application/vnd.apple.mpegurl"),
        // Text
        ("txt", "text/plain"), ("text", "text/plain"), ("log", "text/plain"), ("html", "text/html"),
        ("htm", "text/html"), ("css", "text/css"), ("csv", "text/csv"), ("md", "text/markdown"),
        ("js", "text/javascript"), ("mjs", "text/javascript"), ("xml", "application/xml"),
        ("json", "application/json"), ("yaml", "application/yaml"), ("yml", "application/yaml"),
        // Documents and archives
        ("pdf", "application/pdf"), ("zip", "application/zip"), ("gz", "application/gzip"),
        ("tgz", "application/gzip"), ("tar", "application/x-tar"), ("bz2", "application/x-bzip2"),
        ("xz", "application/x-xz"), ("7z", "application/x-7z-compressed"), ("rar", "application/vnd.rar"),
        ("doc", "application/msword"),
        ("docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        ("xls", "application/vnd.ms-excel"),
        ("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        ("ppt", "application/vnd.ms-powerpoint"),
        ("pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
        ("apk", "application/vnd.android.package-archive"), ("wasm", "application/wasm"),
        ("woff", "font/woff"), ("woff2", "font/woff2"), ("ttf", "font/ttf"), ("otf", "font/otf"),
    ]

    private static let byExtension: [String: String] = {
        var map: [String: String] = [:]
        for (ext, mime) in table where map[ext] == nil { map[ext] = mime }
        return map
    }()

    private static let byType: [String: String] = {
        var map: [String: String] = [:]
        for (ext, mime) in table where map[mime] == nil { map[mime] = "." + ext }
        // Aliases some clients send.
        for (alias, ext) in [("text/xml", ".xml"), ("audio/x-wav", ".wav"), ("audio/wave", ".wav"),
            ("application/x-gzip", ".gz"), ("application/javascript", ".js"), ("audio/mp3", ".mp3")]
        {
            map[alias] = ext
        }
        return map
    }()

    /// The MIME type of an extension.
    ///
    /// - Parameter ext: With or without the leading dot, any ASCII case (`.JPG`, `jpg`).
    /// - Returns: The type, or `nil` when unknown.
    public static func forExtension(_ ext: some StringProtocol) -> String? {
        let text = Substring(String(ext))
        let bare = text.first == "." ? text.dropFirst() : text
        return byExtension[lowercasedASCII(bare)]
    }

    /// The MIME type guessed from a file name or key: the extension after the last `.` of the
    /// last `/`-separated component (`dir.v2/a.tar.gz` → `gz`).
    ///
    /// - Parameter name: A file name or object key.
    /// - Returns: The type, or `nil` when there is no known extension.
    public static func forFileName(_ name: some StringProtocol) -> String? {
        let text = String(name)
        let last = text.split(separator: "/", omittingEmptySubsequences: false).last ?? Substring(text)
        guard let dot = last.lastIndex(of: "."), dot != last.index(before: last.endIndex) else { return nil }
        return forExtension(last[last.index(after: dot)...])
    }

    /// The extension for `$(ext)`, with its leading dot (§2).
    ///
    /// - Parameter mimeType: A MIME type; parameters (`; charset=…`) and ASCII case are ignored.
    /// - Returns: E.g. `.jpg` for `image/jpeg`, or `nil` when unknown.
    public static func `extension`(for mimeType: some StringProtocol) -> String? {
        var essence = mimeType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        while essence.first == " " || essence.first == "\t" { essence = essence.dropFirst() }
        while essence.last == " " || essence.last == "\t" { essence = essence.dropLast() }
        return byType[lowercasedASCII(essence)]
    }

    static func lowercasedASCII(_ text: some StringProtocol) -> String {
        String(decoding: text.utf8.map { (0x41...0x5A).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
    }
}
