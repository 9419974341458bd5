import NativeCrypto
import UpCore

/// The `Content-MD5` header of a v2 part (qiniu-protocol.md §5).
///
/// Python and go-sdk send the lower-case **hex** MD5 (32 characters), not base64 as S3 does; we
/// accept hex in either case and, to be lenient, base64 in the standard or the URL-safe
/// alphabet, padded (24 characters) or not (22). The two forms cannot be confused: their
/// lengths differ.
enum ContentMD5 {
    /// The 16 MD5 bytes the header names, or `nil` when it is absent or empty (the header is optional).
    ///
    /// - Throws: `UpError(.badRequest)` (400) when the value is neither form.
    static func parse(_ header: String?) throws(UpError) -> [UInt8]? {
        guard let header else { return nil }
        let value = header.trimmingASCIISpaces()
        guard !value.isEmpty else { return nil }
        if value.utf8.count == 32, let bytes = Hex.decode(value) { return bytes }
        if value.utf8.count == 24 || value.utf8.count == 22 {
            // Standard → URL-safe alphabet; the decoder accepts padded and unpadded text.
            let urlSafe = value.utf8.map { byte -> UInt8 in
                switch byte {
                case UInt8(ascii: "+"): UInt8(ascii: "-")
                case UInt8(ascii: "/"): UInt8(ascii: "_")
                default: byte
                }
            }
            if let bytes = URLSafeBase64.decode(bytes: urlSafe), bytes.count == 16 { return bytes }
        }
        throw UpError(.badRequest, detail: "Content-MD5 is neither 32 hex digits nor base64 of 16 bytes")
    }
}

extension String {
    /// The text without leading and trailing ASCII spaces and tabs (header values may carry them).
    fileprivate func trimmingASCIISpaces() -> String {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        let trimmed = utf8.drop(while: isSpace).reversed().drop(while: isSpace).reversed()
        return String(decoding: Array(trimmed), as: UTF8.self)
    }
}
