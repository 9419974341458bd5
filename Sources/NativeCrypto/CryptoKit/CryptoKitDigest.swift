#if canImport(CryptoKit)
internal import CryptoKit
internal import Foundation  // UnsafeRawBufferPointer: DataProtocol, for HMAC.update(data:)

// The Apple-platform engines. This file is not compiled on Linux (no CryptoKit there): keep it
// to CryptoKit's documented API, and NativeCrypto's own names (Digest, HMAC, SHA256) qualified
// with `CryptoKit.` where CryptoKit has the same name.

/// ``DigestEngine`` on CryptoKit's hash functions.
struct CryptoKitDigest: ~Copyable, DigestEngine {
    private enum State {
        case sha1(Insecure.SHA1)
        case sha256(CryptoKit.SHA256)
        case md5(Insecure.MD5)
    }

    private var state: State

    init(_ algorithm: DigestAlgorithm) {
        state = switch algorithm {
        case .sha1: .sha1(Insecure.SHA1())
        case .sha256: .sha256(CryptoKit.SHA256())
        case .md5: .md5(Insecure.MD5())
        }
    }

    mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard buffer.count > 0 else { return }
        switch state {
        case .sha1(var hash): unsafe hash.update(bufferPointer: buffer); state = .sha1(hash)
        case .sha256(var hash): unsafe hash.update(bufferPointer: buffer); state = .sha256(hash)
        case .md5(var hash): unsafe hash.update(bufferPointer: buffer); state = .md5(hash)
        }
    }

    consuming func finalize() -> [UInt8] {
        switch state {
        case .sha1(let hash): Array(hash.finalize())
        case .sha256(let hash): Array(hash.finalize())
        case .md5(let hash): Array(hash.finalize())
        }
    }
}

/// ``MACEngine`` on CryptoKit's `HMAC`: the keyed state is a value, prepared once and copied
/// per message.
struct CryptoKitMAC: MACEngine {
    private enum Prepared {
        case sha1(CryptoKit.HMAC<Insecure.SHA1>)
        case sha256(CryptoKit.HMAC<CryptoKit.SHA256>)
        case md5(CryptoKit.HMAC<Insecure.MD5>)
    }

    private let prepared: Prepared

    init(_ algorithm: DigestAlgorithm, key: [UInt8]) {
        let key = SymmetricKey(data: key)
        prepared = switch algorithm {
        case .sha1: .sha1(CryptoKit.HMAC(key: key))
        case .sha256: .sha256(CryptoKit.HMAC(key: key))
        case .md5: .md5(CryptoKit.HMAC(key: key))
        }
    }

    func code(for buffer: UnsafeRawBufferPointer) -> [UInt8] {
        code { unsafe $0(buffer) }
    }

    func code(forParts parts: [[UInt8]]) -> [UInt8] {
        code { feed in
            for part in parts { unsafe part.withUnsafeBytes { unsafe feed($0) } }
        }
    }

    /// Copies the prepared state, lets `body` feed it through the function it is given, finalizes.
    private func code(_ body: ((UnsafeRawBufferPointer) -> Void) -> Void) -> [UInt8] {
        switch prepared {
        case .sha1(var mac):
            body { unsafe mac.update(data: $0) }
            return Array(mac.finalize())
        case .sha256(var mac):
            body { unsafe mac.update(data: $0) }
            return Array(mac.finalize())
        case .md5(var mac):
            body { unsafe mac.update(data: $0) }
            return Array(mac.finalize())
        }
    }
}

/// ``RandomEngine`` on the system CSPRNG (`SystemRandomNumberGenerator` is `arc4random_buf` on
/// Apple platforms, documented as cryptographically secure).
enum SystemRandom: RandomEngine {
    static func bytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
#endif
