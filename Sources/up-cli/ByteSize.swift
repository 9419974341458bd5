/// Sizes on the command line and in messages: `4M`, `1.5M`, `512K`, `1G`, `4MiB`, or plain bytes.
/// Suffixes are binary (K = 1024) and case-insensitive.
enum ByteSize {
    /// Parses `text`; nil when it is not a positive size.
    static func parse(_ text: String) -> Int64? {
        var digits = text.trimmingWhitespace().lowercased()
        for suffix in ["ib", "b"] where digits.hasSuffix(suffix) && digits.count > suffix.count {
            digits.removeLast(suffix.count)
            break
        }
        var multiplier: Double = 1
        if let last = digits.last, let power = ["k": 1, "m": 2, "g": 3, "t": 4][String(last)] {
            multiplier = (0..<power).reduce(1) { product, _ in product * 1024 }
            digits.removeLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            let number = Double(digits), number > 0
        else { return nil }
        let bytes = (number * multiplier).rounded()
        guard bytes >= 1, bytes < 9.2e18 else { return nil }
        return Int64(bytes)
    }

    /// `12.3 MiB`, `512 B`.
    static func format(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : "\(oneDecimal(value)) \(units[unit])"
    }

    /// `3.2`: one decimal, no Foundation formatting.
    static func oneDecimal(_ value: Double) -> String {
        let tenths = Int64((value * 10).rounded())
        return "\(tenths / 10).\(abs(tenths % 10))"
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[start...end])
    }
}

extension Duration {
    /// The duration in seconds as a floating-point number.
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) * 1e-18
    }
}
