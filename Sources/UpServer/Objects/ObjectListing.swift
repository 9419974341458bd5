import UpCore

/// One page of Qiniu's v1 listing (`rsf /list`): keys with `prefix` in UTF-8 byte order, from
/// where `marker` left off, at most `limit` entries — objects, and with a `delimiter` the
/// "directories" (`commonPrefixes`: the prefix plus everything up to and including the first
/// delimiter after it), each counted once.
///
/// The index is asked only for plain key ranges (`ObjectCatalog.listObjects`): after a common
/// prefix `p` the next page starts at the smallest key that does not start with `p`
/// (``KeyOrder/successor(ofPrefix:)``), so a directory of a million keys costs one lookup, not
/// a million rows. The marker is opaque to clients: URL-safe base64 of the key to resume from.
struct ObjectListing {
    /// Largest (and default) page, as Qiniu.
    static let maxLimit = 1000

    let catalog: any ObjectCatalog
    let bucket: String
    let prefix: String
    let delimiter: String
    let limit: Int

    /// A page.
    struct Page {
        var items: [StoredObject] = []
        var commonPrefixes: [String] = []
        /// Where the next page starts; `nil` when nothing is left.
        var marker: String?
    }

    /// Lists from `marker` (`nil`: the start).
    ///
    /// - Throws: `UpError(.badListMarker)` for a marker this server did not issue.
    func page(marker: String?) async throws -> Page {
        var from = prefix
        if let marker {
            guard let bytes = URLSafeBase64.decode(marker), let resume = String(validating: bytes, as: UTF8.self) else {
                throw UpError(.badListMarker, detail: "marker \(marker.prefix(64))")
            }
            if resume.utf8.lexicographicallyPrecedes(prefix.utf8) == false { from = resume }
        }
        let below = KeyOrder.successor(ofPrefix: prefix)
        var page = Page()
        var count = 0
        fill: while count < limit {
            let batch = try await catalog.listObjects(bucket: bucket, from: from, below: below, limit: limit - count)
            if batch.isEmpty { return page }
            for object in batch {
                if let common = commonPrefix(of: object.key) {
                    page.commonPrefixes.append(common)
                    count += 1
                    // Past every key under this prefix; nil: nothing can follow it.
                    guard let next = KeyOrder.successor(ofPrefix: common) else { return page }
                    from = next
                    continue fill
                }
                page.items.append(object)
                count += 1
                from = object.key + "\u{0}"  // the smallest key after this one
            }
        }
        // Something is left iff one more key exists from here.
        if try await !catalog.listObjects(bucket: bucket, from: from, below: below, limit: 1).isEmpty {
            page.marker = URLSafeBase64.encode(from.utf8)
        }
        return page
    }

    /// The common prefix `key` falls under, or nil (no delimiter, or none after the prefix).
    private func commonPrefix(of key: String) -> String? {
        guard !delimiter.isEmpty else { return nil }
        let rest = key.utf8.dropFirst(prefix.utf8.count)
        let pattern = Array(delimiter.utf8)
        var index = rest.startIndex
        while index != rest.endIndex {
            if rest[index...].starts(with: pattern) {
                let end = key.utf8.index(index, offsetBy: pattern.count)
                return String(key[..<end])
            }
            index = rest.index(after: index)
        }
        return nil
    }
}

/// Orders of keys as the index compares them (UTF-8 bytes, i.e. code points).
enum KeyOrder {
    /// The smallest string greater than every string that starts with `prefix`: the prefix with
    /// its last scalar replaced by the next one (U+10FFFF has none: drop it and try the one
    /// before). `nil` for `""` or an all-U+10FFFF prefix: nothing is greater.
    static func successor(ofPrefix prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            var value = last.value + 1
            if (0xD800...0xDFFF).contains(value) { value = 0xE000 }
            if let next = Unicode.Scalar(value) {
                var text = String.UnicodeScalarView()
                text.append(contentsOf: scalars)
                text.append(next)
                return String(text)
            }
        }
        return nil
    }
}
