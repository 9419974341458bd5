/// The `X-Qiniu-Date` timestamp, `YYYYMMDDTHHMMSSZ` in UTC (qiniu-protocol.md §3.3), converted
/// with pure calendar arithmetic (no clock, no Foundation).
public enum QiniuDate {
    /// Parses `YYYYMMDDTHHMMSSZ`.
    ///
    /// - Parameter text: The header value.
    /// - Returns: Unix seconds, or `nil` when the shape or a field range is wrong.
    public static func parse(_ text: some StringProtocol) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 16, bytes[8] == UInt8(ascii: "T"), bytes[15] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8),
            let hour = number(9..<11), let minute = number(11..<13), let second = number(13..<15),
            (1...12).contains(month), (1...CivilTime.daysInMonth(year: year, month: month)).contains(day),
            hour < 24, minute < 60, second < 60
        else { return nil }
        let days = CivilTime.daysFromCivil(year: year, month: month, day: day)
        return days * 86_400 + hour * 3_600 + minute * 60 + second
    }

    /// Formats Unix seconds as `YYYYMMDDTHHMMSSZ` (UTC), for an up-server that signs the date.
    ///
    /// - Parameter unixSeconds: Seconds since 1970-01-01T00:00:00Z (years 0–9999).
    /// - Returns: The header value.
    public static func format(_ unixSeconds: Int64) -> String {
        let time = CivilTime(unixSeconds: unixSeconds)
        return CivilTime.pad(time.year, 4) + CivilTime.pad(time.month, 2) + CivilTime.pad(time.day, 2) + "T"
            + CivilTime.pad(time.hour, 2) + CivilTime.pad(time.minute, 2) + CivilTime.pad(time.second, 2) + "Z"
    }
}

/// Broken-down time from Unix seconds (proleptic Gregorian; Howard Hinnant's algorithms).
struct CivilTime: Equatable {
    var year: Int64
    var month: Int64
    var day: Int64
    var hour: Int64
    var minute: Int64
    var second: Int64

    /// Splits `unixSeconds` (already shifted to the wanted zone).
    init(unixSeconds: Int64) {
        var days = unixSeconds / 86_400
        var rest = unixSeconds % 86_400
        if rest < 0 {
            rest += 86_400
            days -= 1
        }
        hour = rest / 3_600
        minute = rest % 3_600 / 60
        second = rest % 60
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// Days since 1970-01-01 of a civil date.
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Zero-padded decimal.
    static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
