/// The object attributes `mkfile` and `put` carry as `name/B64(value)` path pairs
/// (qiniu-protocol.md §4.3, §4.5): `key`, `fname`, `mimeType`, `x:<name>`, `x-qn-meta-<name>`.
///
/// Duplicates: a recognized name given twice (including `x:a` and `x%3Aa`) is a `400` — two
/// readers of one URL must never disagree on the key or a variable, and no SDK repeats a name.
/// Unknown names are ignored (the Python SDK copies every `params` entry into mkfile, §6), and so
/// are `x:` / `x-qn-meta-` with nothing after the prefix.
struct ObjectPathFields: Sendable {
    var key: String?
    var fname: String?
    var mimeType: String?
    var customVariables: [(name: String, value: String)] = []
    var metadata: [(name: String, value: String)] = []
    /// Recognized names already taken (duplicates are refused).
    var seen: Set<String> = []

    /// Consumes one pair if its name is one of ours.
    ///
    /// - Returns: `false` when `name` is not an object field (the caller may know it, e.g. `crc32`).
    /// - Throws: `.badRequest` for a duplicate or a value that is not B64 UTF-8; `.invalidKey` for
    ///   a key ``ObjectKeyRule`` refuses.
    mutating func take(name: String, value: String) throws(UpError) -> Bool {
        let isVariable = name.utf8.count > 2 && name.utf8.starts(with: "x:".utf8)
        let isMetadata = name.utf8.count > 10 && name.utf8.starts(with: "x-qn-meta-".utf8)
        guard ["key", "fname", "mimeType"].contains(name) || isVariable || isMetadata else { return false }
        guard seen.insert(name).inserted else {
            throw UpError(.badRequest, detail: "path parameter \(name) given twice")
        }
        let text = name == "key" ? try WirePath.base64Key(value) : try WirePath.base64Text(value, field: name)
        switch name {
        case "key": key = text
        case "fname": fname = text
        case "mimeType": mimeType = text
        default:
            if isVariable { customVariables.append((name, text)) } else { metadata.append((name, text)) }
        }
        return true
    }

    /// The pairs in the Python SDK's order (mimeType, key, fname, x:…, x-qn-meta-…), each value
    /// padded B64; a leading `/` before each segment.
    var pathSuffix: String {
        var out = ""
        if let mimeType { out += "/mimeType/" + WirePath.base64Segment(mimeType) }
        if let key { out += "/key/" + WirePath.base64Segment(key) }
        if let fname { out += "/fname/" + WirePath.base64Segment(fname) }
        for (name, value) in customVariables + metadata {
            out += "/" + WirePath.rawSegment(name) + "/" + (value.isEmpty ? "" : WirePath.base64Segment(value))
        }
        return out
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.key == rhs.key && lhs.fname == rhs.fname && lhs.mimeType == rhs.mimeType
            && WirePath.equal(lhs.customVariables, rhs.customVariables) && WirePath.equal(lhs.metadata, rhs.metadata)
    }
}
