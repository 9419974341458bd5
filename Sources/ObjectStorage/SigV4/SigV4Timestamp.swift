public import Basics

/// The instant a request is signed, in SigV4's two forms: `x-amz-date` (ISO 8601 basic,
/// `20150830T123600Z`) and the scope's date (`20150830`).
///
/// Time is passed in (DESIGN.md: the pure core reads no clock); the client takes it from its
/// `WallClock` for each request.
public struct SigV4Timestamp: Sendable, Hashable {
    /// `YYYYMMDDTHHMMSSZ`, the `x-amz-date` header.
    public let amzDate: String

    /// `YYYYMMDD`, the first element of the credential scope.
    public var date: String { String(amzDate.prefix(8)) }

    /// The timestamp for `seconds` since 1970-01-01T00:00:00Z (UTC; years 0…9999).
    public init(secondsSince1970 seconds: Int64) {
        // RFC 3339 "2015-08-30T12:36:00.000Z" without its separators and milliseconds.
        let extended = RFC3339.utc(millisecondsSince1970: seconds * 1000)
        amzDate = String(extended.prefix(19).filter { $0 != "-" && $0 != ":" }) + "Z"
    }

    /// The timestamp of the wall clock's current second.
    public init(clock: some WallClock) {
        self.init(secondsSince1970: clock.unixSeconds)
    }

    /// Parses `YYYYMMDDTHHMMSSZ` as written in the AWS test suite; nil for anything else.
    public init?(amzDate: String) {
        let utf8 = Array(amzDate.utf8)
        guard utf8.count == 16, utf8[8] == UInt8(ascii: "T"), utf8[15] == UInt8(ascii: "Z"),
              (utf8[0..<8] + utf8[9..<15]).allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { return nil }
        self.amzDate = amzDate
    }
}
