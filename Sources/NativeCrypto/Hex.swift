/// Lower-case hexadecimal, the text form of digests in Upgate (API key hashes, `bodySha1`,
/// v2 `Content-MD5`).
public enum Hex {
    /// Returns `bytes` as lower-case hex, two characters per byte.
    ///
    /// Written straight into the string's storage: an API key's hash is hexed on every token
    /// request, and the generic byte-by-byte `append` loop cost ~8,000 instructions for 32 bytes.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        if let text = bytes.withContiguousStorageIfAvailable({ unsafe encode(UnsafeRawBufferPointer($0)) }) {
            return text
        }
        return unsafe Array(bytes).withUnsafeBytes { unsafe encode($0) }
    }

    private static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        unsafe String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            var index = 0
            for unsafe byte in unsafe bytes {
                unsafe out[index] = lowerDigit(byte >> 4)
                unsafe out[index + 1] = lowerDigit(byte & 0x0F)
                index += 2
            }
            return index
        }
    }

    private static func lowerDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x61 - 10 + nibble }

    /// Parses hex text (either case) into bytes; nil for odd length or a non-hex character.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(utf8[index]), let low = value(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func value(_ character: UInt8) -> UInt8? {
        switch character {
        case 0x30...0x39: character - 0x30
        case 0x61...0x66: character - 0x61 + 10
        case 0x41...0x46: character - 0x41 + 10
        default: nil
        }
    }
}
