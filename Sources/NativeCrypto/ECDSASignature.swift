/// The two encodings of an ECDSA signature (r, s): JWS's fixed-width `r ‖ s` (RFC 7518 §3.4)
/// and the DER `SEQUENCE { INTEGER r, INTEGER s }` (SEC 1 §C.5) that OpenSSL verifies.
public enum ECDSASignature {
    /// The DER form of a raw `r ‖ s` signature whose halves are `scalarBytes` long each, or nil
    /// when `raw` is not exactly twice that long.
    public static func der(fromRaw raw: [UInt8], scalarBytes: Int) -> [UInt8]? {
        guard scalarBytes > 0, scalarBytes <= 66, raw.count == 2 * scalarBytes else { return nil }
        let r = integer(raw[..<scalarBytes]), s = integer(raw[scalarBytes...])
        return [0x30] + length(r.count + s.count) + r + s
    }

    /// A DER INTEGER holding the unsigned big-endian `bytes`: minimal, with a 0x00 in front when
    /// the top bit is set (so it is not read as negative).
    private static func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var value = Array(bytes.drop { $0 == 0 })
        if value.isEmpty { value = [0] }
        if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
        return [0x02] + length(value.count) + value
    }

    /// A DER length: short form below 128, else 0x81 plus one byte (enough for P-521's 139).
    private static func length(_ count: Int) -> [UInt8] {
        count < 0x80 ? [UInt8(count)] : [0x81, UInt8(count)]
    }
}
