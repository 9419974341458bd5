/// Makes `UploadRecord` ids: `"up_"` + 26 Crockford base32 characters, ULID layout.
///
/// The 128 bits are a 48-bit Unix-millisecond timestamp followed by 80 random bits, so ids sort
/// by creation time as plain strings (Crockford's alphabet is in ASCII order) and are unguessable
/// across milliseconds. Within one generator ids strictly increase: a repeated or earlier
/// millisecond reuses the last timestamp and adds a random step (1 ... 2^32) to the random part,
/// so ordering never depends on the clock moving forward and the next id is still not "+1".
///
/// A store owns one generator and calls it under its own serialization, hence `mutating`.
public struct UploadRecordIDGenerator: Sendable {
    /// Prefix of every upload record id.
    public static let prefix = "up_"
    /// Length of an id including the prefix.
    public static let length = prefix.utf8.count + 26

    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    private static let maxTimestamp: Int64 = (1 << 48) - 1

    private let random: @Sendable () -> UInt64
    private var lastTimestamp: Int64 = -1
    /// The 80 random bits of the last id: the top 16 and the low 64.
    private var high: UInt16 = 0
    private var low: UInt64 = 0

    /// Creates a generator.
    ///
    /// - Parameter random: Source of random bits; the system CSPRNG by default. Tests may pass a
    ///   deterministic one.
    public init(random: @escaping @Sendable () -> UInt64 = { UInt64.random(in: .min ... .max) }) {
        self.random = random
    }

    /// Returns a new id for a record created at `milliseconds` (Unix time), greater than every id
    /// this generator returned before.
    public mutating func next(milliseconds: Int64) -> String {
        var timestamp = min(max(milliseconds, 0), Self.maxTimestamp)
        if timestamp > lastTimestamp {
            reseed()
        } else {
            timestamp = lastTimestamp
            let (sum, overflow) = low.addingReportingOverflow((random() & 0xFFFF_FFFF) + 1)
            low = sum
            if overflow {
                if high == .max {
                    // 80 bits exhausted within one millisecond: borrow the next millisecond.
                    timestamp = min(timestamp + 1, Self.maxTimestamp)
                    reseed()
                } else {
                    high += 1
                }
            }
        }
        lastTimestamp = timestamp
        return Self.encode(timestamp: timestamp, high: high, low: low)
    }

    /// Fresh random bits with the top bit clear, leaving room for steps within one millisecond.
    private mutating func reseed() {
        high = UInt16(truncatingIfNeeded: random()) >> 1
        low = random()
    }

    /// Whether `id` has the shape of an upload record id (prefix, length, alphabet).
    public static func isWellFormed(_ id: String) -> Bool {
        guard id.hasPrefix(prefix), id.utf8.count == length else { return false }
        let body = id.utf8.dropFirst(prefix.utf8.count)
        // 26 characters hold 130 bits; the first carries only the top 3 of the 128, so it is 0–7.
        return body.allSatisfy(alphabet.contains) && body.first.map { $0 <= UInt8(ascii: "7") } == true
    }

    /// The creation time (Unix milliseconds) encoded in a well-formed `id`, else `nil`.
    public static func milliseconds(of id: String) -> Int64? {
        guard isWellFormed(id) else { return nil }
        var value: Int64 = 0
        for byte in id.utf8.dropFirst(prefix.utf8.count).prefix(10) {
            guard let digit = alphabet.firstIndex(of: byte) else { return nil }
            value = value << 5 | Int64(digit)
        }
        return value
    }

    private static func encode(timestamp: Int64, high: UInt16, low: UInt64) -> String {
        var output = Array(prefix.utf8)
        output.reserveCapacity(length)
        // 10 characters × 5 bits = 50 bits of timestamp, the top 2 always 0.
        for shift in stride(from: 45, through: 0, by: -5) {
            output.append(alphabet[Int((timestamp >> Int64(shift)) & 31)])
        }
        // 16 characters × 5 bits = the 80 random bits, most significant first.
        for shift in stride(from: 75, through: 0, by: -5) {
            let bits: UInt64
            if shift >= 64 {
                bits = UInt64(high) >> UInt64(shift - 64)
            } else {
                // Smart shifts: `<< 64` is 0, so the lowest characters take nothing from `high`.
                bits = low >> UInt64(shift) | UInt64(high) << UInt64(64 - shift)
            }
            output.append(alphabet[Int(bits & 31)])
        }
        return String(decoding: output, as: UTF8.self)
    }
}
