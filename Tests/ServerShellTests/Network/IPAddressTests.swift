@testable import ServerShell
import Foundation
import TestSupport
import Testing

@Suite struct IPAddressTests {
    @Test(arguments: [
        ("192.0.2.1", "192.0.2.1"),
        ("0.0.0.0", "0.0.0.0"),
        ("255.255.255.255", "255.255.255.255"),
        ("::", "::"),
        ("::1", "::1"),
        ("1::", "1::"),
        ("2001:DB8::1", "2001:db8::1"),
        ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
        ("2001:0db8:0000:0000:0000:0000:0002:0001", "2001:db8::2:1"),
        ("1:0:0:2:0:0:0:3", "1:0:0:2::3"),
        ("1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"),
        ("::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8"),
        ("::ffff:192.0.2.1", "192.0.2.1"),
        ("::FFFF:c000:0201", "192.0.2.1"),
        ("::192.0.2.1", "::c000:201"),
        ("1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"),
    ])
    func parsesAndPrintsCanonically(text: String, canonical: String) throws {
        let address = try #require(IPAddress(text))
        #expect(address.description == canonical)
        #expect(IPAddress(canonical) == address)
    }

    @Test(arguments: [
        "", "01.2.3.4", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.4 ", " 1.2.3.4", "1:2:3:4:5:6:7:8:9", "1::2::3",
        "12345::", "::g", "1:2:3:4:5:6:7", "fe80::1%eth0", ":1", "1:", "1:::2", ":::", "1.2.3.4::", "::1.2.3",
        "0x1.2.3.4", "１.2.3.4", "1.2.3.04", "[::1]", "::1.2.3.4:5", "localhost",
    ])
    func refusesWhatIsNotAnAddress(text: String) {
        #expect(IPAddress(text) == nil, "\(text)")
    }

    @Test func anIPv4MappedAddressIsTheIPv4Address() throws {
        #expect(IPAddress("::ffff:10.1.2.3") == IPAddress("10.1.2.3"))
        #expect(IPAddress("::ffff:10.1.2.3")?.family == .v4)
        #expect(IPAddress("::10.1.2.3")?.family == .v6)  // IPv4-compatible (deprecated) is not mapped
    }

    @Test func rateLimitKeysAreTheIPv4AddressOrTheIPv6Slash64() throws {
        #expect(IPAddress("192.0.2.7")?.rateLimitKey == "192.0.2.7")
        let one = try #require(IPAddress("2001:db8:1:2:aaaa::1"))
        let other = try #require(IPAddress("2001:db8:1:2:ffff:1:2:3"))
        #expect(one.rateLimitKey == "2001:db8:1:2::/64")
        #expect(one.rateLimitKey == other.rateLimitKey)
        #expect(IPAddress("2001:db8:1:3::1")?.rateLimitKey == "2001:db8:1:3::/64")
    }

    /// Python's `ipaddress` is the oracle: the same texts (the tables above and random
    /// addresses, written with and without leading zeros, upper case and compressed runs) must
    /// be accepted or refused alike, and print the same.
    @Test func agreesWithPythonsIPAddressModule() async throws {
        var generator = SystemRandomNumberGenerator()
        var texts = [
            "192.0.2.1", "::", "1::", "::ffff:1.2.3.4", "01.2.3.4", "1:2:3:4:5:6:7", "1::2::3", "::1.2.3", "1:2:3:4:5:6:7:8",
            "0:0:1:0:0:0:1:0", "0:0:0:1:0:0:0:0", "a:0:0:b:0:0:c:0",
        ]
        for _ in 0..<400 {
            // Groups that are zero half the time, so runs of zeros of every length and position occur.
            let groups = (0..<8).map { _ in Bool.random(using: &generator) ? 0 : UInt16.random(in: 0...0xFFFF, using: &generator) }
            let style = Int.random(in: 0..<3, using: &generator)
            let written = groups.map { group in
                let hex = String(group, radix: 16, uppercase: style == 1)
                return style == 2 ? String(repeating: "0", count: 4 - hex.count) + hex : hex
            }
            texts.append(written.joined(separator: ":"))
            let v4 = (0..<4).map { _ in String(UInt8.random(in: 0...255, using: &generator)) }.joined(separator: ".")
            texts.append(v4)
        }
        let swift = texts.map { IPAddress($0)?.description ?? "invalid" }
        let file = FileManager.default.temporaryDirectory.appending(path: "ip-\(UUID().uuidString).txt")
        try texts.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = PythonSDK.repositoryRoot.appending(path: "Tests/Conformance/ip_canonical.py").path
        let (status, output) = try await PythonSDK.run([script, file.path])
        #expect(status == 0, "\(output)")
        let python = output.split(separator: "\n").map(String.init)
        try #require(python.count == texts.count, "\(output)")
        for (index, text) in texts.enumerated() {
            #expect(swift[index] == python[index], "\(text): ours \(swift[index]), Python \(python[index])")
        }
    }
}
