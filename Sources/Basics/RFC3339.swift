/// RFC 3339 timestamps in UTC with millisecond precision, e.g. `2026-02-28T23:59:59.123Z`, by
/// integer arithmetic: the log writes one per line, and Foundation's formatter cost more than
/// the rest of the line.
public enum RFC3339 {
    /// The timestamp for `milliseconds` since 1970-01-01T00:00:00Z (negative: before), for
    /// years 0…9999.
    public static func utc(millisecondsSince1970 milliseconds: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        appendUTC(millisecondsSince1970: milliseconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the timestamp for `milliseconds` since 1970 to `output` as UTF-8 (24 bytes).
    public static func appendUTC(millisecondsSince1970 milliseconds: Int64, to output: inout [UInt8]) {
        let (seconds, millis) = floorDivide(milliseconds, 1000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civil(fromDays: days)
        append(year, digits: 4, to: &output)
        output.append(UInt8(ascii: "-"))
        append(month, digits: 2, to: &output)
        output.append(UInt8(ascii: "-"))
        append(day, digits: 2, to: &output)
        output.append(UInt8(ascii: "T"))
        append(secondOfDay / 3600, digits: 2, to: &output)
        output.append(UInt8(ascii: ":"))
        append(secondOfDay / 60 % 60, digits: 2, to: &output)
        output.append(UInt8(ascii: ":"))
        append(secondOfDay % 60, digits: 2, to: &output)
        output.append(UInt8(ascii: "."))
        append(millis, digits: 3, to: &output)
        output.append(UInt8(ascii: "Z"))
    }

    /// Year, month (1…12) and day (1…31) of the proleptic Gregorian calendar for `days` since
    /// 1970-01-01 (H. Hinnant's `civil_from_days`: 400-year eras starting on March 1st, so the
    /// leap day is the last day of its year).
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468  // days since 0000-03-01
        let era = floorDivide(z, 146_097).quotient
        let dayOfEra = z - era * 146_097  // 0…146096
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365  // 0…399
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // 0…365, from March 1st
        let shiftedMonth = (5 * dayOfYear + 2) / 153  // 0…11, March = 0
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (quotient: Int64, remainder: Int64) {
        let (q, r) = a.quotientAndRemainder(dividingBy: b)
        return r < 0 ? (q - 1, r + b) : (q, r)
    }

    /// Appends `value` (0 ≤ value < 10^digits, digits 2…4) zero-padded to `digits` decimal
    /// digits. Each digit is a division by a constant, which the compiler turns into a multiply:
    /// this runs for every log line.
    private static func append(_ value: Int64, digits: Int, to output: inout [UInt8]) {
        let zero = UInt8(ascii: "0")
        if digits >= 4 { output.append(zero + UInt8(truncatingIfNeeded: value / 1000 % 10)) }
        if digits >= 3 { output.append(zero + UInt8(truncatingIfNeeded: value / 100 % 10)) }
        output.append(zero + UInt8(truncatingIfNeeded: value / 10 % 10))
        output.append(zero + UInt8(truncatingIfNeeded: value % 10))
    }
}
