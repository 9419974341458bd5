public import HTTPKit

/// Which peers may tell a server who the client is (`trustedProxies` in either server's configuration).
///
/// A reverse proxy or load balancer appends the address it received a request from to
/// `X-Forwarded-For`; anything to the left of that was written by whoever sent the request and
/// proves nothing. So the client is the right-most address of the chain (the `X-Forwarded-For`
/// entries, then the socket's peer) that is *not* a trusted proxy: walking from the right, every
/// trusted hop vouches for the one before it, and the first untrusted one is where the vouching
/// stops. Without trusted proxies (the default) the header is ignored and the client is the peer,
/// so a client cannot pick its own address for a rate limit or a log line by sending the header.
///
/// An entry that is not an address (a port-less `unknown`, garbage) ends the walk: nothing left of
/// it can be vouched for, so the last trusted address seen is the answer.
public struct TrustedProxies: Sendable, Equatable {
    /// The trusted blocks.
    public let blocks: [CIDRBlock]

    /// Nobody is trusted: `X-Forwarded-For` is ignored.
    public static let none = TrustedProxies(blocks: [])

    /// Trusts `blocks`.
    public init(blocks: [CIDRBlock]) { self.blocks = blocks }

    /// Trusts the blocks written in `entries` (`"10.0.0.0/8"`, `"::1"`).
    ///
    /// - Throws: A `CIDRBlock.ParseError` naming the first entry that is not a block, with its index.
    public init(_ entries: [String]) throws(CIDRBlock.ParseError) {
        var blocks: [CIDRBlock] = []
        for (index, entry) in entries.enumerated() {
            do {
                blocks.append(try CIDRBlock(entry))
            } catch {
                throw CIDRBlock.ParseError(description: "trustedProxies[\(index)]: \(error.description)")
            }
        }
        self.blocks = blocks
    }

    /// Whether no proxy is trusted.
    public var isEmpty: Bool { blocks.isEmpty }

    /// Whether `address` is in one of the trusted blocks.
    public func trusts(_ address: IPAddress) -> Bool {
        blocks.contains { $0.contains(address) }
    }

    /// The client's address for a request from `peer` (the socket's address) carrying the
    /// `X-Forwarded-For` field values `forwardedFor` (every field, in order).
    ///
    /// The peer is returned unchanged when nobody is trusted or the peer is not trusted; an
    /// address taken from the header is returned in canonical form (``IPAddress/description``).
    public func clientAddress(peer: String, forwardedFor: [String]) -> String {
        guard !blocks.isEmpty, let peerAddress = IPAddress(peer), trusts(peerAddress) else { return peer }
        var client = peerAddress
        let hops = forwardedFor.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
        for hop in hops.reversed() {
            guard let address = Self.address(hop) else { break }
            client = address
            if !trusts(address) { break }
        }
        return client.description
    }

    /// What ``HTTPServer/Configuration/clientAddress`` runs for each request: the client from the
    /// peer and its `X-Forwarded-For` fields; `nil` (the peer, no work) when nobody is trusted.
    public var clientAddressResolver: (@Sendable (_ peer: String, _ headers: HTTPHeaders) -> String)? {
        guard !blocks.isEmpty else { return nil }
        return { [self] peer, headers in clientAddress(peer: peer, forwardedFor: headers.values(for: "X-Forwarded-For")) }
    }

    /// One `X-Forwarded-For` entry as an address: optional whitespace around it (RFC 9110 §5.6.1
    /// lists), and the `[v6]:port` or `v4:port` forms some proxies write.
    static func address(_ entry: Substring) -> IPAddress? {
        var trimmed = entry
        while let first = trimmed.first, first == " " || first == "\t" { trimmed = trimmed.dropFirst() }
        while let last = trimmed.last, last == " " || last == "\t" { trimmed = trimmed.dropLast() }
        if let address = IPAddress(trimmed) { return address }
        if trimmed.hasPrefix("["), let close = trimmed.firstIndex(of: "]") {
            let rest = trimmed[trimmed.index(after: close)...]
            guard rest.isEmpty || Self.isPort(rest) else { return nil }
            return IPAddress(trimmed[trimmed.index(after: trimmed.startIndex)..<close]).flatMap { $0.family == .v6 ? $0 : nil }
        }
        if let colon = trimmed.firstIndex(of: ":"), Self.isPort(trimmed[colon...]),
            let address = IPAddress(trimmed[..<colon]), address.family == .v4
        {
            return address
        }
        return nil
    }

    /// `:` and a port number, 0…65535.
    private static func isPort(_ text: Substring) -> Bool {
        guard text.first == ":", let port = UInt16(text.dropFirst()) else { return false }
        return text.utf8.count <= 6 && String(port) == text.dropFirst()  // no sign, no leading zeros
    }
}
