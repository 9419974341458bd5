/// Legacy `POST /rs-mkfile/<EncodedEntryURI>/fsize/<n>[/mimeType/<B64>][/meta/<B64>]`
/// `[/customer/<raw>][/params/<B64 or raw query>][/rotate/<n>]` (qiniu-protocol.md §4.4).
///
/// Only very old SDKs call it. Pairs after the entry come in any order; `fsize` is required;
/// unknown names are ignored; a known name twice is a 400. Percent-decoding as for ``MkfilePath``
/// (so `customer` and a raw `params` arrive decoded once).
public struct RsMkfilePath: Sendable, Equatable {
    /// Bucket of the entry.
    public var bucket: String
    /// Key of the entry; `nil` when the entry names the bucket alone.
    public var key: String?
    /// Declared object size in bytes.
    public var fsize: Int64
    /// `mimeType`, decoded.
    public var mimeType: String?
    /// `meta`, decoded (opaque).
    public var meta: String?
    /// `customer`, as sent (not base64).
    public var customer: String?
    /// `params`: the v5-era callback parameters — B64-decoded when the segment is B64 of UTF-8
    /// text, else the raw (percent-decoded) text.
    public var params: String?
    /// `rotate`, a number (image rotation hint; accepted and carried, never applied).
    public var rotate: Int?

    /// Creates a path value.
    public init(
        bucket: String, key: String?, fsize: Int64, mimeType: String? = nil, meta: String? = nil,
        customer: String? = nil, params: String? = nil, rotate: Int? = nil
    ) {
        self.bucket = bucket
        self.key = key
        self.fsize = fsize
        self.mimeType = mimeType
        self.meta = meta
        self.customer = customer
        self.params = params
        self.rotate = rotate
    }

    /// Parses a request path as received.
    ///
    /// - Parameter path: The raw path.
    /// - Returns: The parsed path.
    /// - Throws: ``UpError`` `.badRequest` (400): bad entry, missing or bad `fsize`, a name
    ///   without a value, a duplicate, or a bad B64 value; `.invalidKey` for a key
    ///   ``ObjectKeyRule`` refuses.
    public static func parse(_ path: some StringProtocol) throws(UpError) -> RsMkfilePath {
        let segments = try WirePath.segments(path, after: "/rs-mkfile/")
        guard let entry = EncodedEntryURI.decode(segments[0]) else {
            throw UpError(.badRequest, detail: "rs-mkfile entry is not B64 of bucket[:key]")
        }
        if let key = entry.key { try ObjectKeyRule.check(key) }
        var result = RsMkfilePath(bucket: entry.bucket, key: entry.key, fsize: -1)
        var seen: Set<String> = []
        try WirePath.pairs(segments.dropFirst()) { (name, value) throws(UpError) in
            let known = ["fsize", "mimeType", "meta", "customer", "params", "rotate"]
            guard known.contains(name) else { return }
            guard seen.insert(name).inserted else {
                throw UpError(.badRequest, detail: "path parameter \(name) given twice")
            }
            switch name {
            case "fsize": result.fsize = try WirePath.integer(value, field: "fsize", in: 0...Int64.max)
            case "mimeType": result.mimeType = try WirePath.base64Text(value, field: "mimeType")
            case "meta": result.meta = try WirePath.base64Text(value, field: "meta")
            case "customer": result.customer = value
            case "params":
                result.params = URLSafeBase64.decode(value).flatMap { String(validating: $0, as: UTF8.self) } ?? value
            default: result.rotate = Int(try WirePath.integer(value, field: "rotate", in: 0...3_600))
            }
        }
        guard result.fsize >= 0 else { throw UpError(.badRequest, detail: "rs-mkfile without fsize") }
        return result
    }

    /// The request path (`params` written as B64).
    public var path: String {
        var out = "/rs-mkfile/" + EncodedEntryURI.encode(bucket: bucket, key: key) + "/fsize/\(fsize)"
        if let mimeType { out += "/mimeType/" + WirePath.base64Segment(mimeType) }
        if let meta { out += "/meta/" + WirePath.base64Segment(meta) }
        if let customer { out += "/customer/" + WirePath.rawSegment(customer) }
        if let params { out += "/params/" + WirePath.base64Segment(params) }
        if let rotate { out += "/rotate/\(rotate)" }
        return out
    }
}
