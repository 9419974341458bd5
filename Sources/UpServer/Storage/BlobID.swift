import NativeCrypto

/// The name of one blob (a block of a v1 upload or a part of a v2 upload) in a `BlockStore`.
///
/// Always 16 bytes from `SecureRandom`, as 32 lower-case hex characters. A blob's path on disk is
/// derived from this id only, never from a bucket or key: keys are user input (`../../etc/passwd`
/// is a valid Qiniu key), and an id that is random and checked to be hex cannot name anything
/// outside the blob directory. Random rather than sequential so ids from several up-server nodes
/// sharing one store never collide and reveal nothing about other uploads.
public struct BlobID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Number of random bytes in an id.
    public static let byteCount = 16

    /// The id as 32 lower-case hex characters; also the blob's file name.
    public let hex: String

    /// Parses an id; `nil` unless `hex` is exactly 32 lower-case hex characters.
    ///
    /// Upper case is refused so one blob has one spelling (and one file name).
    public init?(hex: String) {
        guard hex.utf8.count == Self.byteCount * 2,
            hex.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        self.hex = hex
    }

    private init(checked hex: String) { self.hex = hex }

    /// A new id from `SecureRandom`.
    public static func random() -> BlobID {
        BlobID(checked: Hex.encode(SecureRandom.bytes(byteCount)))
    }

    /// The first two hex characters: the shard directory, so no directory holds more than
    /// 1/256 of all blobs.
    public var shard: String { String(hex.prefix(2)) }

    /// The hex text.
    public var description: String { hex }

    /// Orders by hex text, which makes listings stable.
    public static func < (lhs: BlobID, rhs: BlobID) -> Bool { lhs.hex < rhs.hex }
}
