public import HTTPKit

/// FNV-1a (64 bits): a cheap fingerprint for tests that stream bodies and compare what arrived
/// with what was sent, without keeping either whole.
public struct FNV1a: Sendable {
    /// The hash of the bytes so far.
    public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    /// The hash of nothing.
    public init() {}

    /// Adds `bytes`.
    public mutating func update(_ bytes: [UInt8]) {
        for byte in bytes { add(byte) }
    }

    /// Adds `bytes`.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        for byte in bytes { add(byte) }
    }

    private mutating func add(_ byte: UInt8) {
        value ^= UInt64(byte)
        value = value &* 0x0000_0100_0000_01B3
    }
}

/// FNV-1a of `bytes`.
public func checksum(_ bytes: some Sequence<UInt8>) -> UInt64 {
    var hash = FNV1a()
    hash.update(bytes)
    return hash.value
}

extension Router {
    /// A router whose `PUT /upload` streams its body (at most `maxBytes`) through FNV-1a and
    /// answers `"<count> <fnv>"`.
    public static func hashingUploads(maxBytes: Int) -> Router {
        var router = Router()
        router.put("/upload", body: .stream(maxBytes: maxBytes)) { request, _ in
            var hash = FNV1a()
            var total = 0
            for try await piece in request.bodyStream {
                hash.update(piece)
                total += piece.count
            }
            return Response(body: Array("\(total) \(hash.value)".utf8))
        }
        return router
    }
}
