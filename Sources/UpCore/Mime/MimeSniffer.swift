/// Content sniffing for `detectMime` and `mimeLimit` (qiniu-protocol.md §1.3: the limit is
/// checked against the *sniffed* type).
///
/// Magic numbers at fixed offsets for common binary formats, then a text heuristic that answers
/// only when the bytes are clearly text. Pass the first ``windowSize`` bytes of the content (or
/// all of it when shorter); the sniffer never needs more.
public enum MimeSniffer {
    /// How many leading bytes the sniffer looks at (as WHATWG MIME sniffing and Go's
    /// `http.DetectContentType` do).
    public static let windowSize = 512

    /// The MIME type the content's first bytes show.
    ///
    /// - Parameter firstBytes: The content's first bytes (extra bytes are ignored).
    /// - Returns: A MIME type without parameters, or `nil` when nothing is recognized (the caller
    ///   then falls back, finally to `application/octet-stream`); `nil` for empty content.
    public static func sniff(_ firstBytes: [UInt8]) -> String? {
        let bytes = Array(firstBytes.prefix(windowSize))
        guard !bytes.isEmpty else { return nil }
        if let binary = sniffBinary(bytes) { return binary }
        return sniffText(bytes)
    }

    private static func sniffBinary(_ b: [UInt8]) -> String? {
        func has(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + magic.count && b[offset..<(offset + magic.count)].elementsEqual(magic)
        }
        func has(_ ascii: String, at offset: Int = 0) -> Bool { has(Array(ascii.utf8), at: offset) }

        if has([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if has([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if has("GIF87a") || has("GIF89a") { return "image/gif" }
        if has("RIFF") && b.count >= 12 {
            if has("WEBP", at: 8) { return "image/webp" }
            if has("WAVE", at: 8) { return "audio/wav" }
            if has("AVI ", at: 8) { return "video/x-msvideo" }
        }
        if has("BM") && b.count >= 14 && b[6...9].allSatisfy({ $0 == 0 }) { return "image/bmp" }  // reserved = 0
        if has([0x49, 0x49, 0x2A, 0x00]) || has([0x4D, 0x4D, 0x00, 0x2A]) { return "image/tiff" }
        if has([0x00, 0x00, 0x01, 0x00]) && b.count >= 6 && b[4] != 0 { return "image/x-icon" }
        if has("%PDF-") { return "application/pdf" }
        if has([0x50, 0x4B, 0x03, 0x04]) || has([0x50, 0x4B, 0x05, 0x06]) { return "application/zip" }
        if has([0x1F, 0x8B, 0x08]) { return "application/gzip" }
        if has("BZh") && b.count >= 4 && (0x31...0x39).contains(b[3]) { return "application/x-bzip2" }
        if has([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return "application/x-xz" }
        if has([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]) { return "application/x-7z-compressed" }
        if has("Rar!\u{1A}\u{07}") { return "application/vnd.rar" }
        if has("ustar", at: 257) { return "application/x-tar" }
        if has("ftyp", at: 4) { return isoMediaType(b) }
        if has("ID3") { return "audio/mpeg" }
        if has("OggS") { return "audio/ogg" }
        if has("fLaC") { return "audio/flac" }
        if has("#!AMR") { return "audio/amr" }
        if has("MThd") { return "audio/midi" }
        if has("FLV") && b.count >= 4 && b[3] == 1 { return "video/x-flv" }
        if has([0x1A, 0x45, 0xDF, 0xA3]) {
            // EBML: WebM declares the DocType "webm"; anything else is Matroska.
            return contains(b, Array("webm".utf8)) ? "video/webm" : "video/x-matroska"
        }
        if has([0x00, 0x61, 0x73, 0x6D]) { return "application/wasm" }
        if has("wOFF") { return "font/woff" }
        if has("wOF2") { return "font/woff2" }
        // MPEG audio frame sync (11 set bits): layer bits 00 are AAC ADTS, others MP3.
        if b.count >= 2 && b[0] == 0xFF && b[1] & 0xE0 == 0xE0 && b[1] & 0x18 != 0x08 {
            return b[1] & 0x06 == 0 ? "audio/aac" : "audio/mpeg"
        }
        return nil
    }

    /// ISO base media (`ftyp` box): the major brand picks the family.
    private static func isoMediaType(_ b: [UInt8]) -> String {
        let brand = b.count >= 12 ? String(decoding: b[8..<12], as: UTF8.self) : ""
        switch brand {
        case "qt  ": return "video/quicktime"
        case "M4A ", "M4B ": return "audio/mp4"
        case "heic", "heix", "heim", "heis": return "image/heic"
        case "mif1", "msf1": return "image/heif"
        case "avif", "avis": return "image/avif"
        default: return brand.hasPrefix("3g") ? "video/3gpp" : "video/mp4"
        }
    }

    /// `text/plain` (or a structured text type) only when the bytes are clearly text: valid
    /// UTF-8 (a sequence cut by the window's end is allowed), no NUL, and no control characters
    /// other than tab, LF, FF, CR and ESC.
    private static func sniffText(_ b: [UInt8]) -> String? {
        var text = b
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text.removeFirst(3) }
        guard isClearlyText(text, truncated: b.count >= windowSize) else { return nil }
        let start = text.firstIndex(where: { ![0x20, 0x09, 0x0A, 0x0D, 0x0C].contains($0) }) ?? text.endIndex
        let body = text[start...]
        let lower = MimeTypes.lowercasedASCII(String(decoding: body.prefix(64), as: UTF8.self))
        if lower.hasPrefix("<!doctype html") || lower.hasPrefix("<html") || lower.hasPrefix("<head")
            || lower.hasPrefix("<body")
        {
            return "text/html"
        }
        if lower.hasPrefix("<svg") { return "image/svg+xml" }
        if lower.hasPrefix("<?xml") {
            return contains(Array(body), Array("<svg".utf8)) ? "image/svg+xml" : "application/xml"
        }
        if looksLikeJSON(body) { return "application/json" }
        return "text/plain"
    }

    private static func isClearlyText(_ bytes: [UInt8], truncated: Bool) -> Bool {
        guard !bytes.contains(where: { $0 < 0x20 && ![0x09, 0x0A, 0x0C, 0x0D, 0x1B].contains($0) || $0 == 0x7F }) else {
            return false
        }
        if String(validating: bytes, as: UTF8.self) != nil { return true }
        // The window may end inside a multi-byte character: drop up to 3 trailing bytes.
        guard truncated else { return false }
        for cut in 1...3 where cut < bytes.count {
            if String(validating: bytes.dropLast(cut), as: UTF8.self) != nil { return true }
        }
        return false
    }

    /// `{` followed by `"` or `}`, or `[` followed by a JSON value start (whitespace skipped).
    private static func looksLikeJSON(_ body: ArraySlice<UInt8>) -> Bool {
        guard let first = body.first, first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else { return false }
        guard let next = body.dropFirst().first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else { return false }
        if first == UInt8(ascii: "{") { return next == UInt8(ascii: "\"") || next == UInt8(ascii: "}") }
        return Array("{[\"]-0123456789tfn".utf8).contains(next)
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains {
            haystack[$0..<($0 + needle.count)].elementsEqual(needle)
        }
    }
}
