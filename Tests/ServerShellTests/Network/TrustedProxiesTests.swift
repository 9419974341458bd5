@testable import ServerShell
import Testing

@Suite struct TrustedProxiesTests {
    static let proxies = try! TrustedProxies(["10.0.0.0/8", "2001:db8:ffff::/48", "127.0.0.1"])

    @Test(arguments: [
        // Nobody trusted by this peer: the header is the client's own text and proves nothing.
        ("203.0.113.9", ["1.2.3.4"], "203.0.113.9"),
        ("203.0.113.9", [], "203.0.113.9"),
        // A trusted peer: the right-most address it vouches for that is not itself a proxy.
        ("10.0.0.2", ["198.51.100.7"], "198.51.100.7"),
        ("10.0.0.2", ["6.6.6.6, 198.51.100.7"], "198.51.100.7"),
        ("10.0.0.2", ["6.6.6.6, 198.51.100.7, 10.0.0.3"], "198.51.100.7"),
        ("10.0.0.2", ["6.6.6.6", "198.51.100.7", "10.0.0.3"], "198.51.100.7"),  // one field per hop
        ("10.0.0.2", ["spoof, 198.51.100.7"], "198.51.100.7"),
        ("127.0.0.1", ["2001:DB8::7"], "2001:db8::7"),
        ("127.0.0.1", ["[2001:db8::7]:4711"], "2001:db8::7"),
        ("127.0.0.1", ["198.51.100.7:4711"], "198.51.100.7"),
        ("127.0.0.1", ["  198.51.100.7\t"], "198.51.100.7"),
        ("127.0.0.1", ["::ffff:198.51.100.7"], "198.51.100.7"),
        ("127.0.0.1", ["1.1.1.1, 2001:db8:ffff:1::1"], "1.1.1.1"),  // the IPv6 hop is a trusted proxy too
        // Only proxies in the chain: the left-most of them is as far as anyone vouches.
        ("10.0.0.2", ["10.0.0.9, 10.0.0.3"], "10.0.0.9"),
        ("10.0.0.2", [], "10.0.0.2"),
        // Garbage stops the walk: the last vouched-for address stands.
        ("10.0.0.2", ["198.51.100.7, garbage"], "10.0.0.2"),
        ("10.0.0.2", ["198.51.100.7, 10.0.0.3, unknown"], "10.0.0.2"),
        ("10.0.0.2", ["198.51.100.7,, 10.0.0.3"], "10.0.0.3"),
        ("10.0.0.2", ["[1.2.3.4]"], "10.0.0.2"),
        ("10.0.0.2", ["1.2.3.4:99999"], "10.0.0.2"),
        // A peer that is not an address (in-process requests have none) is passed through.
        ("", ["1.2.3.4"], ""),
    ])
    func findsTheClient(peer: String, forwardedFor: [String], client: String) {
        #expect(Self.proxies.clientAddress(peer: peer, forwardedFor: forwardedFor) == client)
    }

    @Test func withoutTrustedProxiesTheHeaderIsIgnored() {
        #expect(TrustedProxies.none.clientAddress(peer: "10.0.0.2", forwardedFor: ["1.2.3.4"]) == "10.0.0.2")
        #expect(TrustedProxies.none.isEmpty)
    }

    @Test func aBadEntryIsNamedWithItsIndex() {
        #expect(throws: CIDRBlock.ParseError(description: "trustedProxies[1]: '10.0.0.1/8' has bits set after the prefix (did you mean 10.0.0.0/8?)")) {
            try TrustedProxies(["127.0.0.1", "10.0.0.1/8"])
        }
    }
}
