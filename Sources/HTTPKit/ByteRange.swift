/// A `Range: bytes=…` request header against a representation of known size (RFC 9110 §14.2):
/// the single-range forms `a-b`, `a-` and `-n`. A header this does not understand — another
/// unit, several ranges, a malformed or reversed range — is ignored (the whole body, 200), as
/// the RFC allows; a well-formed range that starts past the end is unsatisfiable (416).
public enum ByteRange: Equatable, Sendable {
    /// No (usable) range: send everything, 200.
    case whole
    /// Send these bytes, 206 with `Content-Range: bytes a-b/size`.
    case partial(Range<Int64>)
    /// 416 with `Content-Range: bytes */size`.
    case unsatisfiable

    /// Interprets `header` for a body of `size` bytes.
    public static func parse(_ header: String?, size: Int64) -> ByteRange {
        guard let header, header.hasPrefix("bytes=") else { return .whole }
        let spec = header.dropFirst("bytes=".count).trimmingSpaces
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .whole }
        let first = spec[..<dash], last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            guard let suffix = Self.number(last) else { return .whole }
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            return .partial(max(0, size - suffix)..<size)
        }
        guard let start = Self.number(first) else { return .whole }
        var end = size - 1
        if !last.isEmpty {
            guard let given = Self.number(last), given >= start else { return .whole }
            end = min(given, size - 1)
        }
        guard start < size else { return .unsatisfiable }
        return .partial(start..<(end + 1))
    }

    /// `Content-Range` for a partial answer: `bytes a-b/size`.
    public static func contentRange(_ range: Range<Int64>, size: Int64) -> String {
        "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)"
    }

    /// Digits only, at most 18 of them.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return Int64(text)
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
