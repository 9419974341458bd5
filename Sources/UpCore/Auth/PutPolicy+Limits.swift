// qiniu-protocol.md §1.3: size and MIME limits of a policy.

extension PutPolicy {
    /// Checks `size` against ``fsizeMin`` and ``fsizeLimit``.
    ///
    /// For resumable uploads call it with the running total at mkblk/part time and with the
    /// final size at mkfile/complete (§1.3 `fsizeLimit`); the minimum only applies to the final size.
    ///
    /// - Parameters:
    ///   - size: Bytes.
    ///   - isFinal: Whether `size` is the object's final size (enables the ``fsizeMin`` check).
    /// - Throws: ``UpError`` `.fileTooLarge` (413) or `.fileTooSmall` (403).
    public func checkSize(_ size: Int64, isFinal: Bool = true) throws(UpError) {
        if let fsizeLimit, size > fsizeLimit {
            throw UpError(.fileTooLarge, detail: "size \(size) > fsizeLimit \(fsizeLimit)")
        }
        if isFinal, let fsizeMin, size < fsizeMin {
            throw UpError(.fileTooSmall, detail: "size \(size) < fsizeMin \(fsizeMin)")
        }
    }

    /// Whether an upload under this policy needs the type sniffed from its first bytes
    /// (``MimeResolution/needsSniffedType(detectMime:mimeLimit:clientMimeType:fname:key:)`` with
    /// this policy's ``detectMime`` and ``mimeLimit``).
    public func needsSniffedType(clientMimeType: String?, fname: String?, key: String?) -> Bool {
        MimeResolution.needsSniffedType(
            detectMime: detectMime, mimeLimit: mimeLimit, clientMimeType: clientMimeType, fname: fname, key: key)
    }

    /// Checks a (sniffed) MIME type against ``mimeLimit``: a `;`-separated list, `*` as the
    /// whole subtype (`image/*`), a leading `!` turning the whole list into a deny-list
    /// (`!application/json;text/plain`). Comparison ignores ASCII case and any `; parameters`
    /// of `mimeType`. No ``mimeLimit`` allows everything.
    ///
    /// - Parameter mimeType: The type to check (§1.3: the sniffed one).
    /// - Throws: ``UpError`` `.limitedMimeType` (403).
    public func checkMimeType(_ mimeType: String) throws(UpError) {
        guard let mimeLimit else { return }
        // Split by byte, not by Character: a combining mark after `;` glues them into one
        // grapheme, and `image/png;\u{301}x` would then escape a `!image/png` deny-list.
        let semicolon = UInt8(ascii: ";")
        var list = mimeLimit.utf8[...]
        let isDenyList = list.first == UInt8(ascii: "!")
        if isDenyList { list = list.dropFirst() }
        let candidate = Self.lowercasedASCII(mimeType.utf8.split(separator: semicolon, maxSplits: 1).first ?? [][...])
        let matches = list.split(separator: semicolon).contains { pattern in
            let pattern = Self.lowercasedASCII(pattern)
            if pattern.hasSuffix("/*") {
                return candidate.utf8.starts(with: pattern.utf8.dropLast())
            }
            return pattern == candidate
        }
        guard matches != isDenyList else {
            throw UpError(.limitedMimeType, detail: "\(mimeType) vs mimeLimit \(mimeLimit)")
        }
    }

    private static func lowercasedASCII(_ text: some Collection<UInt8>) -> String {
        let trimmed = text.drop(while: { $0 == 0x20 }).reversed().drop(while: { $0 == 0x20 }).reversed()
        return String(decoding: trimmed.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 32 : $0 }, as: UTF8.self)
    }
}
