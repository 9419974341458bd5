/// A block of addresses in CIDR notation (RFC 4632 §3.1 for IPv4, RFC 4291 §2.3 for IPv6):
/// `10.0.0.0/8`, `2001:db8::/32`; a bare address is the block of that one address.
///
/// Host bits must be zero: `10.0.0.1/8` is refused rather than silently read as `10.0.0.0/8`,
/// since it is more often a typo for `10.0.0.1/32` than a way to write the /8, and a trusted-proxy
/// list that trusts 16 million addresses by accident trusts every forged header from them.
public struct CIDRBlock: Hashable, Sendable, CustomStringConvertible {
    /// The first address of the block.
    public let network: IPAddress
    /// Leading bits every address of the block shares: 0…32 (IPv4) or 0…128 (IPv6).
    public let prefixLength: Int

    /// Why a text is not a CIDR block; ``description`` says what to write instead.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The explanation.
        public let description: String
    }

    /// Parses `text`.
    public init(_ text: String) throws(ParseError) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else {
            throw ParseError(description: "'\(text)' is not an IPv4 or IPv6 address or CIDR block")
        }
        // An IPv4-mapped IPv6 block (::ffff:10.0.0.0/104) is the IPv4 block under it.
        let mapped = address.family == .v4 && parts[0].contains(":")
        let width = mapped ? 128 : address.family.bitCount
        var length = width
        if parts.count == 2 {
            let digits = parts[1]
            guard (1...3).contains(digits.utf8.count), digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let value = Int(digits), value <= width, digits == "0" || !digits.hasPrefix("0")
            else {
                throw ParseError(description: "'\(text)': the prefix length must be 0…\(width)")
            }
            length = value
        }
        if mapped {
            guard length >= 96 else {
                throw ParseError(description: "'\(text)': an IPv4-mapped block needs a prefix length of 96…128")
            }
            length -= 96
        }
        let network = address.masked(to: length)
        guard network == address else {
            throw ParseError(description: "'\(text)' has bits set after the prefix (did you mean \(network)/\(length)?)")
        }
        self.network = network
        prefixLength = length
    }

    /// Whether `address` is in the block (an address of the other family never is).
    public func contains(_ address: IPAddress) -> Bool {
        network.sharesPrefix(prefixLength, with: address)
    }

    /// `network/prefixLength`, canonical.
    public var description: String { "\(network)/\(prefixLength)" }
}
