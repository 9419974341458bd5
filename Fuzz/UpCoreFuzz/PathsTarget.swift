// The upload URL paths (mkfile, bput, mkblk, v2 multipart, rs-mkfile, put/putb64) and the mkfile body.
//
// Input: one selector byte, then the rest of the path after the selected prefix (selector 7: a
// raw path; 8: an mkfile body). Every parser sees every path; a parsed path rendered with
// `.path` parses back to the same value and renders the same text; a ?query never changes a
// parse; an rs-mkfile entry decodes losslessly.
@testable import UpCore

enum PathsTarget {
    static let prefixes = ["/mkfile/", "/bput/", "/mkblk/", "/buckets/", "/rs-mkfile/", "/put/", "/putb64/", ""]

    static func run(_ data: [UInt8]) {
        var input = FuzzInput(data)
        let selector = Int(input.byte() % 9)
        let rest = input.rest()
        if selector == 8 {
            checkBody(rest)
            return
        }
        let text = String(decoding: rest, as: UTF8.self)
        // An entry (rs-mkfile) decodes losslessly: it encodes back to the same text, padding aside.
        let entryText = text.prefix { $0 != "/" }
        if let entry = EncodedEntryURI.decode(entryText) {
            let encoded = EncodedEntryURI.encode(bucket: entry.bucket, key: entry.key)
            require(
                encoded.filter { $0 != "=" } == entryText.filter { $0 != "=" },
                "entry \(show(entryText)) decodes to \(show(entry.bucket)), \(entry.key.map(show) ?? "nil")")
        }
        let path = prefixes[selector] + text
        roundTrip(path, { (text) throws(UpError) in try MkfilePath.parse(text) }, \.path)
        roundTrip(path, { (text) throws(UpError) in try BputPath.parse(text) }, \.path)
        roundTrip(path, { (text) throws(UpError) in try MkblkPath.parse(text) }, \.path)
        roundTrip(path, { (text) throws(UpError) in try MultipartPath.parse(text) }, \.path)
        roundTrip(path, { (text) throws(UpError) in try RsMkfilePath.parse(text) }, \.path)
        roundTrip(path, { (text) throws(UpError) in try PutPath.parse(text) }, \.path)
    }

    static func roundTrip<Parsed: Equatable>(
        _ path: String, _ parse: (String) throws(UpError) -> Parsed, _ render: (Parsed) -> String
    ) {
        guard case .success(let parsed) = attempt({ () throws(UpError) in try parse(path) }) else { return }
        let text = render(parsed)
        switch attempt({ () throws(UpError) in try parse(text) }) {
        case .success(let again):
            require(again == parsed, "\(Parsed.self) round trip changed the value: \(show(path)) -> \(show(text))")
            require(render(again) == text, "\(Parsed.self).path not stable: \(show(text))")
        case .failure(let error):
            require(false, "\(Parsed.self).path does not parse (\(show(error))): \(show(path)) -> \(show(text))")
        }
        // A query never changes the result.
        if !path.contains("?") {
            let withQuery = attempt { () throws(UpError) in try parse(path + "?a=b/c") }
            require((try? withQuery.get()) == parsed, "\(Parsed.self): a ?query changed the parse of \(show(path))")
        }
    }

    static func checkBody(_ bytes: [UInt8]) {
        guard case .success(let body) = attempt({ () throws(UpError) in try MkfileBody.parse(bytes) }) else { return }
        for context in body.contexts {
            require(MkfileBody.isContextText(context), "mkfile body element \(show(context)) is not ctx text")
        }
        switch attempt({ () throws(UpError) in try MkfileBody.parse(Array(body.text.utf8)) }) {
        case .success(let again): require(again == body, "mkfile body round trip changed \(show(bytes))")
        case .failure(let error): require(false, "mkfile body text does not parse: \(show(error))")
        }
    }

    static func seeds(_ vectors: Vectors) -> [[UInt8]] {
        func seed(_ selector: Int, _ path: String) -> [UInt8] {
            let prefix = prefixes[selector]
            let rest = path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
            return input { $0.byte(UInt8(selector)); $0.rest(rest) }
        }
        var seeds: [[UInt8]] = []
        if let mkfile = vectors.urlPath("mkfile") { seeds.append(seed(0, mkfile)) }
        for name in ["v2_init_with_key", "v2_init_without_key", "v2_upload_part_3", "v2_complete"] {
            if let path = vectors.urlPath(name) { seeds.append(seed(3, path)) }
        }
        let context = BlockContext(blockID: [1, 2, 3], blockSize: 4, offset: 2, crc32: 7, expiresAt: now).encode(
            mac: ctxMac)
        let entry = vectors.string("urls", "entry('mybucket','dir/a.txt')") ?? "bXlidWNrZXQ6ZGlyL2EudHh0"
        seeds += [
            seed(0, "/mkfile/5/key/aGVsbG8udHh0/x%3Aa/QQ/x-qn-meta-c/cmVk/fname/"),
            seed(1, "/bput/\(context)/2"),
            seed(2, "/mkblk/4194304"),
            seed(3, "/buckets/b%20c/objects/~/uploads/id%2F1/10000"),
            seed(4, "/rs-mkfile/\(entry)/fsize/5/mimeType/dGV4dC9wbGFpbg==/meta/bQ/customer/c%20d/params/eD0x/rotate/90"),
            seed(5, "/put/5/key/aGVsbG8udHh0/crc32/907060870/mimeType/dGV4dC9wbGFpbg"),
            seed(6, "/putb64/-1/key/"),
            seed(7, "/mkfile/18446744073709551616"),
            input { $0.byte(8); $0.rest("\(context),\(context)\n") },
        ]
        return seeds
    }
}
