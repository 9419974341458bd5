// The v1 ctx (`BlockContext`): decode of received text, and encode ↔ decode.
//
// Input: a mode byte, then
//   even: the ctx text as received;
//   odd:  fields of a ctx body (version, declared id length, id, block size, offset, crc32,
//         expiry, trailing bytes) that the harness signs with the ctx key, so decoding gets past
//         the MAC. The decoder must accept exactly the bodies a reference reading of the format
//         accepts, with the same fields.
import NativeCrypto
@testable import UpCore

enum ContextTarget {
    /// The MAC label of the ctx format (BlockContext.label); checked against encode(mac:) below.
    static let label = Array("upgate-ctx\0".utf8)

    static func run(_ data: [UInt8]) {
        var input = FuzzInput(data)
        let mode = input.byte()
        if mode % 2 == 0 {
            checkText(String(decoding: input.rest(), as: UTF8.self))
        } else {
            checkSigned(&input, unpadded: mode & 2 != 0)
        }
    }

    static func checkText(_ text: String) {
        guard case .success(let context) = attempt({ () throws(UpError) in
            try BlockContext.decode(text, mac: ctxMac, now: now)
        }) else { return }
        let encoded = context.encode(mac: ctxMac)
        require(
            encoded.filter { $0 != "=" } == text.filter { $0 != "=" },
            "ctx \(show(text)) decoded, but re-encodes as \(show(encoded))")
        checkDecodes(encoded, as: context)
    }

    static func checkSigned(_ input: inout FuzzInput, unpadded: Bool) {
        let version = input.byte()
        let declaredLength = input.byte()
        let id = input.bytes(Int(input.byte() % 72))
        let blockSize = input.uint32()
        let offset = input.uint32()
        let crc = input.uint32()
        let expiresAt = input.int64()
        let tail = input.rest()
        var signed = [version, declaredLength] + id
        for field in [blockSize, offset, crc] { signed += bigEndian(UInt64(field), count: 4) }
        signed += bigEndian(UInt64(bitPattern: expiresAt), count: 8) + tail
        var text = URLSafeBase64.encode(signed + ctxMac.authenticationCode(forParts: [label, signed]))
        if unpadded { text = text.filter { $0 != "=" } }

        let result = attempt { () throws(UpError) in try BlockContext.decode(text, mac: ctxMac, now: now) }
        guard let expected = reference(signed) else {
            if case .failure(let error) = result {
                require(error.code == .invalidContext, "ctx refused with \(show(error)), not invalid_ctx")
            } else {
                require(false, "ctx accepted, the format says no: \(show(signed))")
            }
            return
        }
        switch result {
        case .success(let context):
            require(context == expected, "ctx decoded as \(context), the format says \(expected)")
            let encoded = context.encode(mac: ctxMac)
            require(encoded.filter { $0 != "=" } == text.filter { $0 != "=" }, "ctx encodes differently")
        case .failure(let error):
            require(false, "valid ctx \(expected) refused: \(show(error))")
        }
    }

    /// Reads a signed ctx body the way the format (BlockContext's doc table) defines it.
    static func reference(_ signed: [UInt8]) -> BlockContext? {
        guard signed.count >= 2, signed[0] == 1 else { return nil }
        let idLength = Int(signed[1])
        guard (1...64).contains(idLength), signed.count == 2 + idLength + 20 else { return nil }
        func number(_ at: Int, _ count: Int) -> UInt64 {
            signed[at..<(at + count)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
        let base = 2 + idLength
        let blockSize = Int(number(base, 4))
        let offset = Int(number(base + 4, 4))
        let expiresAt = Int64(bitPattern: number(base + 12, 8))
        guard blockSize >= 1, blockSize <= 4 * 1024 * 1024, offset <= blockSize, now <= expiresAt else { return nil }
        return BlockContext(
            blockID: Array(signed[2..<base]), blockSize: blockSize, offset: offset,
            crc32: UInt32(number(base + 8, 4)), expiresAt: expiresAt)
    }

    static func checkDecodes(_ text: String, as context: BlockContext) {
        switch attempt({ () throws(UpError) in try BlockContext.decode(text, mac: ctxMac, now: now) }) {
        case .success(let again): require(again == context, "ctx round trip changed \(context)")
        case .failure(let error): require(false, "encoded ctx \(context) refused: \(show(error))")
        }
    }

    static func bigEndian(_ value: UInt64, count: Int) -> [UInt8] {
        stride(from: (count - 1) * 8, through: 0, by: -8).map { UInt8(truncatingIfNeeded: value >> UInt64($0)) }
    }

    static func seeds(_ vectors: Vectors) -> [[UInt8]] {
        let context = BlockContext(
            blockID: Array(0..<16), blockSize: 4 * 1024 * 1024, offset: 1024, crc32: 907_060_870, expiresAt: now + 86_400)
        return [
            input { $0.byte(0); $0.rest(context.encode(mac: ctxMac)) },
            input { $0.byte(0); $0.rest(context.encode(mac: ctxMac).filter { $0 != "=" }) },
            input {
                $0.byte(1); $0.byte(1); $0.byte(16); $0.byte(16); $0.raw(Array(0..<16))
                $0.uint32(4_194_304); $0.uint32(4_194_304); $0.uint32(0); $0.int64(now)
            },
            input {
                $0.byte(3); $0.byte(1); $0.byte(1); $0.byte(1); $0.raw([7])
                $0.uint32(1); $0.uint32(0); $0.uint32(0); $0.int64(Int64.max)
            },
        ]
    }
}
