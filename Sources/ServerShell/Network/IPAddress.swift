/// An IPv4 or IPv6 address as numbers, parsed from and printed as text without any C call.
///
/// Parsing is strict, because addresses come from headers a client writes (`X-Forwarded-For`)
/// and from configuration: IPv4 is exactly four decimal octets without leading zeros (`010`
/// would be octal to `inet_aton` and decimal to others — refusing it removes the ambiguity);
/// IPv6 is RFC 4291 §2.2 text (one `::` at most, 1…4 hex digits per group, an optional dotted
/// IPv4 tail), without a zone (`%eth0`). An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) *is*
/// that IPv4 address, so a client cannot appear as two different addresses (to a rate limit, a
/// trusted-proxy check) by spelling one address two ways. ``description`` is canonical: dotted
/// quad, or RFC 5952 text (lower case, no leading zeros, the longest run of zero groups as `::`).
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// The two address families.
    public enum Family: Sendable, Hashable {
        /// 32 bits.
        case v4
        /// 128 bits.
        case v6

        /// Bits in an address of this family.
        public var bitCount: Int { self == .v4 ? 32 : 128 }
    }

    /// The family.
    public let family: Family
    /// The upper 64 bits of an IPv6 address; 0 for IPv4.
    let high: UInt64
    /// The lower 64 bits of an IPv6 address; an IPv4 address in the low 32 bits.
    let low: UInt64

    init(family: Family, high: UInt64, low: UInt64) {
        self.family = family
        self.high = family == .v4 ? 0 : high
        self.low = family == .v4 ? low & 0xFFFF_FFFF : low
    }

    /// Parses `text` (IPv4 or IPv6); nil for anything else, including surrounding spaces.
    public init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        if let v4 = Self.parseIPv4(bytes[...]) {
            self.init(family: .v4, high: 0, low: UInt64(v4))
        } else if let (high, low) = Self.parseIPv6(bytes) {
            // ::ffff:a.b.c.d (RFC 4291 §2.5.5.2) is the IPv4 address a.b.c.d.
            if high == 0, low >> 32 == 0xFFFF {
                self.init(family: .v4, high: 0, low: low & 0xFFFF_FFFF)
            } else {
                self.init(family: .v6, high: high, low: low)
            }
        } else {
            return nil
        }
    }

    /// The canonical text: `192.0.2.1`, `2001:db8::1`.
    public var description: String {
        switch family {
        case .v4:
            return (0..<4).map { String((low >> UInt64(24 - 8 * $0)) & 0xFF) }.joined(separator: ".")
        case .v6:
            return Self.formatIPv6(groups)
        }
    }

    /// The key a per-address rate limit counts under: the IPv4 address itself, or the /64 an IPv6
    /// address is in — one IPv6 subscriber is usually given a whole /64 (RFC 6177) and could
    /// otherwise take a fresh address, and a fresh bucket, for every request.
    public var rateLimitKey: String {
        switch family {
        case .v4: description
        case .v6: IPAddress(family: .v6, high: high, low: 0).description + "/64"
        }
    }

    /// Whether the first `length` bits equal those of `other` (same family).
    func sharesPrefix(_ length: Int, with other: IPAddress) -> Bool {
        guard family == other.family else { return false }
        return masked(to: length) == other.masked(to: length)
    }

    /// This address with every bit after the first `length` cleared.
    func masked(to length: Int) -> IPAddress {
        /// The top `bits` (clamped to 0…64) of a 64-bit word; Swift's `<<` by 64 gives 0.
        func top(_ bits: Int) -> UInt64 { UInt64.max << UInt64(64 - min(max(bits, 0), 64)) }
        switch family {
        case .v4: return IPAddress(family: .v4, high: 0, low: low & (top(length) >> 32))
        case .v6: return IPAddress(family: .v6, high: high & top(length), low: low & top(length - 64))
        }
    }

    private var groups: [UInt16] {
        (0..<8).map { index in
            let word = index < 4 ? high : low
            return UInt16(truncatingIfNeeded: word >> UInt64(48 - 16 * (index % 4)))
        }
    }

    // MARK: Parsing

    private static func parseIPv4(_ bytes: ArraySlice<UInt8>) -> UInt32? {
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy(isDigit) else { return nil }
            guard part.count == 1 || part.first != UInt8(ascii: "0") else { return nil }
            let octet = part.reduce(0) { $0 * 10 + UInt32($1 - UInt8(ascii: "0")) }
            guard octet <= 255 else { return nil }
            value = value << 8 | octet
        }
        return value
    }

    private static func parseIPv6(_ bytes: [UInt8]) -> (UInt64, UInt64)? {
        guard bytes.count >= 2, bytes.count <= 45 else { return nil }
        // Split at the one `::`, if any; only the last side may end in a dotted IPv4.
        var sides: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == UInt8(ascii: ":"), index + 1 < bytes.endIndex, bytes[index + 1] == UInt8(ascii: ":") {
                guard sides.isEmpty else { return nil }
                sides.append(bytes[start..<index])
                index += 2
                start = index
            } else {
                index += 1
            }
        }
        sides.append(bytes[start...])
        let compressed = sides.count == 2
        func parse(_ side: ArraySlice<UInt8>, last: Bool) -> [UInt16]? {
            // An empty side is only the one before or after `::` (`::1`, `1::`, `::`).
            side.isEmpty && compressed ? [] : groups(side, allowIPv4Tail: last)
        }
        guard let head = parse(sides[0], last: !compressed) else { return nil }
        guard let tail = compressed ? parse(sides[1], last: true) : [] else { return nil }
        let count = head.count + tail.count
        if compressed {
            guard count <= 7 else { return nil }
        } else {
            guard count == 8 else { return nil }
        }
        let all = head + Array(repeating: 0, count: 8 - count) + tail
        let high = all[0..<4].reduce(UInt64(0)) { $0 << 16 | UInt64($1) }
        let low = all[4..<8].reduce(UInt64(0)) { $0 << 16 | UInt64($1) }
        return (high, low)
    }

    /// The 16-bit groups of one side of `::`: `1:2:3`, optionally ending in a dotted IPv4.
    private static func groups(_ side: ArraySlice<UInt8>, allowIPv4Tail: Bool) -> [UInt16]? {
        let parts = side.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        var groups: [UInt16] = []
        for (index, part) in parts.enumerated() {
            if index == parts.count - 1, allowIPv4Tail, part.contains(UInt8(ascii: ".")) {
                guard let v4 = parseIPv4(part) else { return nil }
                groups.append(UInt16(v4 >> 16))
                groups.append(UInt16(v4 & 0xFFFF))
                continue
            }
            guard (1...4).contains(part.count), part.allSatisfy(isHexDigit) else { return nil }
            groups.append(part.reduce(0) { $0 << 4 | UInt16(hexValue($1)) })
        }
        return groups
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x66)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8 {
        isDigit(byte) ? byte - 0x30 : (byte | 0x20) - 0x61 + 10
    }

    // MARK: Formatting

    /// RFC 5952 §4: lower-case hex without leading zeros; the longest run (first on a tie) of two
    /// or more zero groups becomes `::`; a single zero group stays `0`.
    private static func formatIPv6(_ groups: [UInt16]) -> String {
        var best: Range<Int>? = nil
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else {
                index += 1
                continue
            }
            var end = index
            while end < 8 && groups[end] == 0 { end += 1 }
            if end - index >= 2, end - index > (best?.count ?? 0) { best = index..<end }
            index = end
        }
        func hex(_ slice: ArraySlice<UInt16>) -> String {
            slice.map { String($0, radix: 16) }.joined(separator: ":")
        }
        guard let best else { return hex(groups[...]) }
        return hex(groups[..<best.lowerBound]) + "::" + hex(groups[best.upperBound...])
    }
}
