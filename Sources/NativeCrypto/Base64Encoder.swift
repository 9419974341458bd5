/// URL-safe base64 (RFC 4648 §5, `=`-padded) written straight into a byte buffer: the loop under
/// UpCore's `URLSafeBase64`, kept here because it walks raw pointers (UpCore is safe-only), as
/// ``Hex`` does.
///
/// A token's ~500-byte policy and its signature go through it on every token request; the
/// bounds-checked loop over arrays cost ~15 instructions a character, this one about 6.
public enum Base64Encoder {
    /// The alphabet as a constant C string: indexing it needs no lazy global or retain.
    private static let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

    /// The 64 characters of the URL-safe alphabet, by value (decoders build their table from it).
    public static var urlSafeAlphabet: [UInt8] { alphabet.withUTF8Buffer { unsafe Array($0) } }

    /// Overwrites `output[start ..< start + 4 * ((range.count + 2) / 3)]` with the padded
    /// URL-safe base64 of `input[range]`.
    ///
    /// - Precondition: `range` lies within `input`, and `output` has that many bytes from `start`.
    public static func writeURLSafe(_ input: [UInt8], range: Range<Int>, into output: inout [UInt8], at start: Int) {
        let count = (range.count + 2) / 3 * 4
        precondition(range.lowerBound >= 0 && range.upperBound <= input.count, "range outside the input")
        precondition(start >= 0 && start <= output.count - count, "no room for the base64")
        guard count > 0 else { return }
        let table = unsafe alphabet.utf8Start
        unsafe input.withUnsafeBufferPointer { source in
            unsafe output.withUnsafeMutableBufferPointer { target in
                unsafe encode(source.baseAddress! + range.lowerBound, count: range.count, into: target.baseAddress! + start, table)
            }
        }
    }

    /// Three bytes in, four characters out per step; the last one or two bytes padded with `=`.
    private static func encode(
        _ source: UnsafePointer<UInt8>, count: Int, into target: UnsafeMutablePointer<UInt8>, _ table: UnsafePointer<UInt8>
    ) {
        var index = 0
        var out = 0
        while index &+ 3 <= count {
            let chunk = unsafe UInt32(source[index]) << 16 | UInt32(source[index &+ 1]) << 8 | UInt32(source[index &+ 2])
            unsafe target[out] = table[Int(chunk >> 18)]
            unsafe target[out &+ 1] = table[Int(chunk >> 12 & 0x3F)]
            unsafe target[out &+ 2] = table[Int(chunk >> 6 & 0x3F)]
            unsafe target[out &+ 3] = table[Int(chunk & 0x3F)]
            index &+= 3
            out &+= 4
        }
        let remaining = count &- index
        guard remaining > 0 else { return }
        var chunk = unsafe UInt32(source[index]) << 16
        if remaining == 2 { chunk |= unsafe UInt32(source[index &+ 1]) << 8 }
        unsafe target[out] = table[Int(chunk >> 18)]
        unsafe target[out &+ 1] = table[Int(chunk >> 12 & 0x3F)]
        unsafe target[out &+ 2] = remaining == 2 ? table[Int(chunk >> 6 & 0x3F)] : UInt8(ascii: "=")
        unsafe target[out &+ 3] = UInt8(ascii: "=")
    }
}
