// `application/x-www-form-urlencoded` bodies and percent-encoding (`FormURLEncoding`).
//
// Input: the body. Parsed pairs re-encode to a body that parses to the same pairs; any text
// percent-encodes to unreserved ASCII and `%XX` only, and decodes back to itself.
@testable import UpCore

enum FormTarget {
    static func run(_ data: [UInt8]) {
        if let pairs = FormURLEncoding.parse(data) {
            let body = pairs.map { FormURLEncoding.percentEncode($0.name) + "=" + FormURLEncoding.percentEncode($0.value) }
                .joined(separator: "&")
            let again = FormURLEncoding.parse(Array(body.utf8))
            require(
                again.map { $0.map(\.name) == pairs.map(\.name) && $0.map(\.value) == pairs.map(\.value) } == true,
                "form round trip changed \(show(data)) (re-encoded \(show(body)))")
        }
        let text = String(decoding: data, as: UTF8.self)
        let encoded = FormURLEncoding.percentEncode(text)
        require(
            encoded.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                    UInt8(ascii: "~"), UInt8(ascii: "%"):
                    true
                default: false
                }
            }, "percentEncode left a reserved byte in \(show(encoded))")
        require(FormURLEncoding.percentEncode(text[...]) == encoded, "percentEncode(Substring) differs")
        require(FormURLEncoding.percentDecode(encoded) == text, "percent-decoding the encoding of \(show(text))")
        require(
            FormURLEncoding.percentDecode(encoded, plusAsSpace: false) == text,
            "percent-decoding (plus kept) the encoding of \(show(text))")
        if let decoded = FormURLEncoding.percentDecode(text, plusAsSpace: false) {
            require(
                FormURLEncoding.percentDecode(FormURLEncoding.percentEncode(decoded), plusAsSpace: false) == decoded,
                "decode ∘ encode is not the identity on \(show(decoded))")
        }
    }

    static func seeds(_ vectors: Vectors) -> [[UInt8]] {
        var seeds = ["a=1&&b=%E4%B8%83+x&c&=d&e=%zz", "name=%F0%9F%98%80&k=a%2Fb%3D%26"].map { Array($0.utf8) }
        for group in ["qbox_callback_form", "qiniu_v2_form"] {
            if let body = vectors.string(group, "body") { seeds.append(Array(body.utf8)) }
        }
        return seeds
    }
}
