import Foundation
import NativeCrypto
import Testing

/// Signature verification against the published examples: RFC 7515 Appendix A.2 (RS256) and A.3
/// (ES256), RFC 8037 Appendix A.4 (Ed25519). Each key is built from its JWK numbers, as
/// biz-server builds keys from a JWKS; tampering with any byte must fail.
@Suite("Public keys")
struct PublicKeyTests {
    static func base64URL(_ text: String) -> [UInt8] {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return Array(Data(base64Encoded: standard)!)
    }

    /// Signing input and signature of a compact JWS.
    static func split(_ jws: String) -> (input: [UInt8], signature: [UInt8]) {
        let parts = jws.split(separator: ".")
        return (Array("\(parts[0]).\(parts[1])".utf8), base64URL(String(parts[2])))
    }

    // RFC 7515 A.2.
    static let rsaN = "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"
    static let rs256 = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"
    // RFC 7515 A.3.
    static let p256X = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"
    static let p256Y = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
    static let es256 = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
    // RFC 8037 A.4.
    static let ed25519X = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
    static let eddsa = "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc.hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg"

    static func keyAndToken(_ name: String) throws -> (PublicKey, String) {
        switch name {
        case "RS256": (try PublicKey.rsa(modulus: base64URL(rsaN), exponent: base64URL("AQAB")), rs256)
        case "ES256": (try PublicKey.p256(x: base64URL(p256X), y: base64URL(p256Y)), es256)
        default: (try PublicKey.ed25519(base64URL(ed25519X)), eddsa)
        }
    }

    @Test(arguments: ["RS256", "ES256", "EdDSA"])
    func verifiesThePublishedExampleAndNothingElse(algorithm: String) throws {
        let (key, jws) = try Self.keyAndToken(algorithm)
        let (input, signature) = Self.split(jws)
        #expect(key.isValidSignature(signature, for: input))
        for index in [0, signature.count / 2, signature.count - 1] {
            var tampered = signature
            tampered[index] ^= 0x01
            #expect(!key.isValidSignature(tampered, for: input), "flipped signature byte \(index)")
        }
        var message = input
        message[message.count - 1] ^= 0x01
        #expect(!key.isValidSignature(signature, for: message))
        #expect(!key.isValidSignature([], for: input))
        #expect(!key.isValidSignature(signature + [0], for: input))
        #expect(!key.isValidSignature(Array(signature.dropLast()), for: input))
    }

    @Test func eachKeyVerifiesOnlyItsOwnScheme() throws {
        let (rsa, _) = try Self.keyAndToken("RS256")
        let (ec, _) = try Self.keyAndToken("ES256")
        let (ed, _) = try Self.keyAndToken("EdDSA")
        for (key, jws) in [(rsa, Self.es256), (rsa, Self.eddsa), (ec, Self.rs256), (ec, Self.eddsa), (ed, Self.es256)] {
            let (input, signature) = Self.split(jws)
            #expect(!key.isValidSignature(signature, for: input))
        }
    }

    @Test func reportsKindAndSize() throws {
        let (rsa, _) = try Self.keyAndToken("RS256")
        #expect(rsa.kind == .rsa && rsa.bits == 2048)
        let (ec, _) = try Self.keyAndToken("ES256")
        #expect(ec.kind == .p256 && ec.bits == 256)
        // Leading zero bytes of a JWK number do not change the key.
        let padded = try PublicKey.rsa(modulus: [0, 0] + Self.base64URL(Self.rsaN), exponent: [0, 1, 0, 1])
        let (input, signature) = Self.split(Self.rs256)
        #expect(padded.isValidSignature(signature, for: input))
    }

    @Test func refusesKeyMaterialThatIsNotAKey() {
        var offCurve = Self.base64URL(Self.p256Y)
        offCurve[31] ^= 0x01
        #expect(throws: PublicKeyError.self) { try PublicKey.p256(x: Self.base64URL(Self.p256X), y: offCurve) }
        #expect(throws: PublicKeyError.self) { try PublicKey.p256(x: [1, 2, 3], y: Self.base64URL(Self.p256Y)) }
        #expect(throws: PublicKeyError.self) { try PublicKey.rsa(modulus: [0, 0], exponent: [1, 0, 1]) }
        #expect(throws: PublicKeyError.self) { try PublicKey.rsa(modulus: Self.base64URL(Self.rsaN), exponent: []) }
        #expect(throws: PublicKeyError.self) { try PublicKey.ed25519(Array(repeating: 7, count: 31)) }
    }

    @Test func verifiesFromManyThreadsAtOnce() async throws {
        let (key, jws) = try Self.keyAndToken("ES256")
        let (input, signature) = Self.split(jws)
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<64 { group.addTask { key.isValidSignature(signature, for: input) } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 64 && results.allSatisfy { $0 })
    }
}

@Suite("ECDSA signature encoding")
struct ECDSASignatureTests {
    @Test func rawToDERKeepsIntegersMinimalAndPositive() throws {
        let r = [UInt8](repeating: 0, count: 31) + [0x05]
        let s = [0x80] + [UInt8](repeating: 0x11, count: 31)
        let der = try #require(ECDSASignature.der(fromRaw: r + s, scalarBytes: 32))
        #expect(der == [0x30, 3 + 35, 0x02, 1, 0x05, 0x02, 33, 0x00, 0x80] + [UInt8](repeating: 0x11, count: 31))
        let zero = try #require(ECDSASignature.der(fromRaw: [UInt8](repeating: 0, count: 64), scalarBytes: 32))
        #expect(zero == [0x30, 6, 0x02, 1, 0, 0x02, 1, 0])
    }

    @Test(arguments: [0, 63, 65, 128])
    func refusesTheWrongLength(count: Int) {
        #expect(ECDSASignature.der(fromRaw: [UInt8](repeating: 1, count: count), scalarBytes: 32) == nil)
    }
}
