import NativeCrypto

/// URL-safe base64 (RFC 4648 §5: `-` and `_` instead of `+` and `/`), the encoding of every
/// Qiniu wire field: tokens, signatures, entry URIs, mkfile segments, etags.
///
/// ``encode(_:)`` keeps the `=` padding because every official SDK emits it
/// (qiniu-protocol.md, "Notation"); ``decode(_:)`` accepts padded and unpadded text.
/// Hand-written tables: this sits on the token-verification hot path. The encoder's loop is
/// NativeCrypto's ``Base64Encoder`` (raw pointers, which this safe-only module cannot use).
public enum URLSafeBase64 {
    /// Maps an ASCII byte to its 6-bit value; 0xFF for bytes outside the URL-safe alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in Base64Encoder.urlSafeAlphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    /// Encodes `bytes` with the URL-safe alphabet and `=` padding.
    ///
    /// - Parameter bytes: Any byte sequence.
    /// - Returns: The padded base64 text; its length is always a multiple of 4.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var output: [UInt8] = []
        append(Array(bytes), to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Number of characters ``encode(_:)`` makes of `byteCount` bytes.
    public static func encodedCount(_ byteCount: Int) -> Int { (byteCount + 2) / 3 * 4 }

    /// Appends the padded URL-safe base64 of `input[range]` to `output`: no intermediate text,
    /// so a token's parts are written into the buffer that is sent (the token hot path).
    ///
    /// - Parameters:
    ///   - input: The bytes.
    ///   - range: Which of them to encode (all by default).
    ///   - output: Bytes to append to.
    public static func append(_ input: [UInt8], range: Range<Int>? = nil, to output: inout [UInt8]) {
        let range = range ?? 0..<input.count
        let start = output.count
        output.append(contentsOf: repeatElement(UInt8(ascii: "="), count: encodedCount(range.count)))
        write(input, range: range, into: &output, at: start)
    }

    /// Overwrites `output[start ..< start + encodedCount(range.count)]` with the padded URL-safe
    /// base64 of `input[range]` (a slot reserved earlier, e.g. for a signature computed last).
    ///
    /// - Precondition: `output` has that many bytes from `start`.
    public static func write(_ input: [UInt8], range: Range<Int>, into output: inout [UInt8], at start: Int) {
        Base64Encoder.writeURLSafe(input, range: range, into: &output, at: start)
    }

    /// Decodes URL-safe base64, padded or not.
    ///
    /// Rejects characters outside the URL-safe alphabet (including `+` and `/`), `=` anywhere but
    /// at the end, more than two `=`, padded text whose length is not a multiple of 4, and
    /// unpadded text of length 4n+1 (which cannot encode whole bytes), and non-zero unused
    /// trailing bits (RFC 4648 §3.5 canonical form; no SDK emits them). The last rule makes the
    /// text ↔ bytes mapping one-to-one, so e.g. a signature `…P4U=` cannot also be sent as `…P4V=`.
    ///
    /// - Parameter text: The base64 text (ASCII).
    /// - Returns: The decoded bytes, or `nil` when `text` is not valid URL-safe base64.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        decode(bytes: Array(text.utf8))
    }

    /// Decodes URL-safe base64 given as ASCII bytes; see ``decode(_:)``.
    ///
    /// - Parameter bytes: The base64 text as bytes.
    /// - Returns: The decoded bytes, or `nil` when invalid.
    public static func decode(bytes: [UInt8]) -> [UInt8]? {
        var end = bytes.count
        var padding = 0
        while end > 0 && bytes[end - 1] == UInt8(ascii: "=") {
            end -= 1
            padding += 1
        }
        guard padding <= 2 else { return nil }
        if padding > 0 && bytes.count % 4 != 0 { return nil }
        if end % 4 == 1 { return nil }
        let table = values
        var output = [UInt8](repeating: 0, count: end / 4 * 3 + max(0, end % 4 - 1))
        var out = 0
        var accumulator: UInt32 = 0
        var bits = 0
        for index in 0..<end {
            let value = table[Int(bytes[index])]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output[out] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                out += 1
            }
        }
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return output
    }
}
