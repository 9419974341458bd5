@testable import Basics
import Foundation
import Testing

@Suite("RFC3339")
struct RFC3339Tests {
    /// Instants in milliseconds since 1970, chosen around the calendar's edges. Foundation switches
    /// to the Julian calendar before 1582-10-15, where RFC 3339 keeps the Gregorian one, so only
    /// later instants are compared with it.
    static let instants: [Int64] = [
        0, 999, 1_000, 86_399_999, 86_400_000, -1, -86_400_000,
        951_782_400_000,  // 2000-02-29 (leap day of a century leap year)
        951_868_799_999,  // 2000-02-29T23:59:59.999
        951_868_800_000,  // 2000-03-01
        1_709_164_800_123,  // 2024-02-29T00:00:00.123
        4_107_542_399_000,  // 2100-02-28T23:59:59 (2100 is no leap year)
        4_107_542_400_000,  // 2100-03-01
        1_798_761_599_999,  // 2026-12-31T23:59:59.999
        1_798_761_600_000,  // 2027-01-01
        253_402_300_799_999,  // 9999-12-31T23:59:59.999
        -11_670_955_200_000,  // 1600-02-29T12:00 (leap day of a 400-year leap year)
        -12_219_292_800_000,  // 1582-10-15, the first Gregorian day
    ]

    @Test(arguments: instants)
    func matchesFoundation(_ milliseconds: Int64) {
        let ours = RFC3339.utc(millisecondsSince1970: milliseconds)
        #expect(ours == Self.foundation(milliseconds), "\(milliseconds)")
    }

    @Test func matchesFoundationOnRandomInstants() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let milliseconds = Int64.random(in: -12_219_292_800_000...253_402_300_799_999, using: &generator)
            #expect(RFC3339.utc(millisecondsSince1970: milliseconds) == Self.foundation(milliseconds), "\(milliseconds)")
        }
    }

    /// The formatter Logger used before, fractional seconds included, on instants a quarter of a
    /// millisecond past the milliseconds (so neither floor nor rounding can differ).
    @Test(arguments: instants.filter { $0 >= 0 })
    func matchesFoundationsFractionalFormat(_ milliseconds: Int64) {
        let date = Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000 + 0.00025)
        let expected = date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true)
            .timeZone(separator: .omitted))
        #expect(RFC3339.utc(millisecondsSince1970: milliseconds) == expected)
    }

    @Test func knownValues() {
        #expect(RFC3339.utc(millisecondsSince1970: 0) == "1970-01-01T00:00:00.000Z")
        #expect(RFC3339.utc(millisecondsSince1970: 1_709_164_800_123) == "2024-02-29T00:00:00.123Z")
        #expect(RFC3339.utc(millisecondsSince1970: -1) == "1969-12-31T23:59:59.999Z")
        #expect(RFC3339.utc(millisecondsSince1970: -62_135_596_800_000) == "0001-01-01T00:00:00.000Z")  // proleptic
    }

    /// Foundation's rendering of the same instant, with components taken by a Gregorian UTC
    /// calendar (the formatter's own fraction rounding would blur the millisecond).
    static func foundation(_ milliseconds: Int64) -> String {
        let (seconds, millis) = (milliseconds - ((milliseconds % 1000) + 1000) % 1000, ((milliseconds % 1000) + 1000) % 1000)
        let date = Date(timeIntervalSince1970: TimeInterval(seconds / 1000))
        let whole = date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false)
            .timeZone(separator: .omitted))
        // "yyyy-MM-ddTHH:mm:ssZ" → insert the milliseconds before the zone designator.
        return String(whole.dropLast()) + "." + String(format: "%03d", Int(millis)) + "Z"
    }
}
