/// A minimal reader for the XML documents S3 answers with: elements, text and the five predefined
/// entities plus numeric references; declarations, comments and attributes are skipped. Enough
/// for `ListBucketResult`, `InitiateMultipartUploadResult`, `Error` and friends, and never traps on
/// malformed input (it returns nil).
struct S3XML: Sendable {
    /// The element name without a namespace prefix.
    var name: String
    /// Child elements in order.
    var children: [S3XML]
    /// The text directly inside, entities decoded.
    var text: String

    /// The first child named `name`.
    func child(_ name: String) -> S3XML? { children.first { $0.name == name } }
    /// Every child named `name`.
    func children(_ name: String) -> [S3XML] { children.filter { $0.name == name } }
    /// The text of the first child named `name`.
    func text(of name: String) -> String? { child(name)?.text }

    /// The root element of `bytes`, or nil when it is not well-formed enough to read.
    static func parse(_ bytes: [UInt8]) -> S3XML? {
        var parser = Parser(bytes: bytes)
        return parser.document()
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        mutating func document() -> S3XML? {
            var stack: [S3XML] = []
            var text: [UInt8] = []
            while index < bytes.count {
                if bytes[index] != UInt8(ascii: "<") {
                    text.append(bytes[index])
                    index += 1
                    continue
                }
                if starts(with: "<?") { guard skip(past: "?>") else { return nil }; continue }
                if starts(with: "<!--") { guard skip(past: "-->") else { return nil }; continue }
                if starts(with: "<![CDATA[") {
                    index += 9
                    guard let end = find("]]>") else { return nil }
                    text.append(contentsOf: bytes[index..<end])
                    index = end + 3
                    continue
                }
                if starts(with: "<!") { guard skip(past: ">") else { return nil }; continue }
                guard let close = find(">") else { return nil }
                let tag = Array(bytes[(index + 1)..<close])
                index = close + 1
                if tag.first == UInt8(ascii: "/") {
                    guard var element = stack.popLast(), Self.name(tag.dropFirst()) == element.name else { return nil }
                    element.text = Self.decode(text)
                    text = []
                    if stack.isEmpty { return element }
                    stack[stack.count - 1].children.append(element)
                } else {
                    let selfClosing = tag.last == UInt8(ascii: "/")
                    let element = S3XML(name: Self.name(selfClosing ? tag.dropLast() : tag[...]), children: [], text: "")
                    text = []
                    if selfClosing {
                        if stack.isEmpty { return element }
                        stack[stack.count - 1].children.append(element)
                    } else {
                        stack.append(element)
                    }
                }
            }
            return nil
        }

        func starts(with prefix: String) -> Bool {
            let p = Array(prefix.utf8)
            return bytes.count - index >= p.count && Array(bytes[index..<(index + p.count)]) == p
        }

        func find(_ needle: String) -> Int? {
            let n = Array(needle.utf8)
            var i = index
            while i + n.count <= bytes.count {
                if bytes[i] == n[0] && Array(bytes[i..<(i + n.count)]) == n { return i }
                i += 1
            }
            return nil
        }

        mutating func skip(past needle: String) -> Bool {
            guard let at = find(needle) else { return false }
            index = at + needle.utf8.count
            return true
        }

        /// The tag's name: up to the first space, without a `prefix:`.
        static func name(_ tag: ArraySlice<UInt8>) -> String {
            let raw = tag.prefix { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
            let local = raw.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false).last ?? raw
            return String(decoding: local, as: UTF8.self)
        }

        /// Decodes `&amp; &lt; &gt; &quot; &apos; &#N; &#xH;`; an unknown reference stays as is.
        static func decode(_ text: [UInt8]) -> String {
            let string = String(decoding: text, as: UTF8.self)
            guard string.contains("&") else { return string }
            var out = ""
            var rest = Substring(string)
            while let amp = rest.firstIndex(of: "&") {
                out += rest[..<amp]
                guard let semicolon = rest[amp...].firstIndex(of: ";") else { break }
                let entity = rest[rest.index(after: amp)..<semicolon]
                let named = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]
                if let value = named[String(entity)] {
                    out += value
                } else if entity.hasPrefix("#x"), let code = UInt32(entity.dropFirst(2), radix: 16), let scalar = Unicode.Scalar(code) {
                    out.unicodeScalars.append(scalar)
                } else if entity.hasPrefix("#"), let code = UInt32(entity.dropFirst()), let scalar = Unicode.Scalar(code) {
                    out.unicodeScalars.append(scalar)
                } else {
                    out += rest[amp...semicolon]
                }
                rest = rest[rest.index(after: semicolon)...]
            }
            return out + rest
        }
    }
}
