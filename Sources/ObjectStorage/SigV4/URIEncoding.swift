/// Percent-encoding as S3 and Signature Version 4 define it ("UriEncode" in the S3 API reference,
/// "Authenticating Requests: Using the Authorization Header", canonical request).
///
/// Only the RFC 3986 unreserved characters `A-Z a-z 0-9 - . _ ~` are kept; every other byte of the
/// UTF-8 form becomes `%XY` with upper-case hex. A `/` is kept in an object key's path (S3 never
/// normalizes or double-encodes it) and encoded everywhere else. The URL sent and the canonical
/// request use this one function, so what is signed is what is sent.
public enum URIEncoding {
    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// `text` encoded for a query name or value: `/` becomes `%2F`.
    public static func component(_ text: some StringProtocol) -> String {
        encode(text, keepingSlash: false)
    }

    /// `text` encoded for a URL path (an object key after its bucket): `/` stays.
    public static func path(_ text: some StringProtocol) -> String {
        encode(text, keepingSlash: true)
    }

    private static func encode(_ text: some StringProtocol, keepingSlash: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) || (keepingSlash && byte == UInt8(ascii: "/")) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}
