/// The ISO 8601 times S3 writes in XML (`LastModified` of `ListObjectsV2`):
/// `2026-12-02T15:36:36.000Z` (AWS) or `2026-12-02T15:36:36Z` (SeaweedFS). Pure arithmetic, no
/// locale or formatter: the store always writes UTC with a `Z`.
public enum S3Timestamp {
    /// Seconds since 1970-01-01T00:00:00Z, or nil when `text` is not `YYYY-MM-DDTHH:MM:SS[.fff]Z`.
    public static func unixSeconds(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z"),
            bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let year = number(bytes[0..<4]), let month = number(bytes[5..<7]), let day = number(bytes[8..<10]),
            let hour = number(bytes[11..<13]), let minute = number(bytes[14..<16]), let second = number(bytes[17..<19]),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var fraction = 0.0
        if bytes.count > 20 {
            let digits = bytes[19..<(bytes.count - 1)]
            guard digits.first == UInt8(ascii: "."), digits.count > 1, let value = number(digits.dropFirst()) else { return nil }
            fraction = Double(value) / pow10(digits.count - 1)
        } else if bytes.count != 20 {
            return nil
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Double(((days * 24 + hour) * 60 + minute) * 60 + second) + fraction
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var value = 0
        for digit in digits {
            guard (0x30...0x39).contains(digit) else { return nil }
            value = value * 10 + Int(digit - 0x30)
        }
        return value
    }

    private static func pow10(_ exponent: Int) -> Double {
        (0..<exponent).reduce(1.0) { value, _ in value * 10 }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
