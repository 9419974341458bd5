@testable import ServerShell
import Testing

@Suite struct CIDRBlockTests {
    @Test(arguments: [
        ("10.0.0.0/8", "10.0.0.0/8", ["10.0.0.0", "10.255.255.255", "10.1.2.3", "::ffff:10.9.9.9"], ["11.0.0.0", "9.255.255.255", "::a00:1"]),
        ("192.168.1.7", "192.168.1.7/32", ["192.168.1.7"], ["192.168.1.6", "192.168.1.8"]),
        ("0.0.0.0/0", "0.0.0.0/0", ["1.2.3.4", "255.255.255.255"], ["::1"]),
        ("172.16.0.0/12", "172.16.0.0/12", ["172.16.0.1", "172.31.255.255"], ["172.32.0.0", "172.15.255.255"]),
        ("2001:db8::/32", "2001:db8::/32", ["2001:db8::1", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"], ["2001:db9::", "10.0.0.1"]),
        ("::1", "::1/128", ["::1", "0:0:0:0:0:0:0:1"], ["::2", "127.0.0.1"]),
        ("fd00::/8", "fd00::/8", ["fdff::1", "fd12:3456::"], ["fc00::1", "fe00::"]),
        ("2001:db8:0:1::/64", "2001:db8:0:1::/64", ["2001:db8:0:1:ffff::"], ["2001:db8:0:2::"]),
        ("::/0", "::/0", ["::1", "ffff::"], ["1.2.3.4"]),
        ("::ffff:10.0.0.0/104", "10.0.0.0/8", ["10.3.3.3"], ["11.0.0.0"]),
        ("2001:db8::/127", "2001:db8::/127", ["2001:db8::", "2001:db8::1"], ["2001:db8::2"]),
    ])
    func containsExactlyItsAddresses(text: String, canonical: String, inside: [String], outside: [String]) throws {
        let block = try CIDRBlock(text)
        #expect(block.description == canonical)
        for address in inside { #expect(block.contains(try #require(IPAddress(address))), "\(address) in \(text)") }
        for address in outside { #expect(!block.contains(try #require(IPAddress(address))), "\(address) not in \(text)") }
    }

    @Test(arguments: [
        ("10.0.0.1/8", "'10.0.0.1/8' has bits set after the prefix (did you mean 10.0.0.0/8?)"),
        ("2001:db8::1/32", "'2001:db8::1/32' has bits set after the prefix (did you mean 2001:db8::/32?)"),
        ("10.0.0.0/33", "'10.0.0.0/33': the prefix length must be 0…32"),
        ("::/129", "'::/129': the prefix length must be 0…128"),
        ("10.0.0.0/", "'10.0.0.0/': the prefix length must be 0…32"),
        ("10.0.0.0/08", "'10.0.0.0/08': the prefix length must be 0…32"),
        ("10.0.0.0/-1", "'10.0.0.0/-1': the prefix length must be 0…32"),
        ("10.0.0.0/8/8", "'10.0.0.0/8/8': the prefix length must be 0…32"),
        ("10.0.0.0 /8", "'10.0.0.0 /8' is not an IPv4 or IPv6 address or CIDR block"),
        ("10.0.0/8", "'10.0.0/8' is not an IPv4 or IPv6 address or CIDR block"),
        ("example.com", "'example.com' is not an IPv4 or IPv6 address or CIDR block"),
        ("", "'' is not an IPv4 or IPv6 address or CIDR block"),
        ("::ffff:10.0.0.0/8", "'::ffff:10.0.0.0/8': an IPv4-mapped block needs a prefix length of 96…128"),
    ])
    func refusesWithAReason(text: String, reason: String) {
        #expect(throws: CIDRBlock.ParseError(description: reason)) { try CIDRBlock(text) }
    }
}
