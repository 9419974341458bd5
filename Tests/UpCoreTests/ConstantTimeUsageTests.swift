import Foundation
import Testing

/// A lint over `Sources/`: every MAC the servers check is compared with `ConstantTime.equals`,
/// never `==`, and API keys are looked up by their SHA-256 (issue 5, item 8).
@Suite("constant-time MAC comparison (source lint)")
struct ConstantTimeUsageTests {
    /// `Sources/`, found from this file's path.
    static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    static func text(_ path: String) throws -> String {
        try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8)
    }

    /// Code lines (comments dropped).
    static func code(_ path: String) throws -> [String] {
        try text(path).split(separator: "\n").map { line in
            let s = String(line)
            if let range = s.range(of: "//") { return String(s[..<range.lowerBound]) }
            return s
        }
    }

    @Test(arguments: [
        "UpCore/Auth/UpToken.swift",  // UpToken.verify
        "UpCore/Callback/CallbackVerifier.swift",  // callbacks and the management signature
        "UpCore/Upload/BlockContext.swift",  // BlockContext.decode (ctx)
        "BizServer/CallbackAuthenticator.swift",  // the signed body hash of QBox JSON callbacks
        "BizServer/Admin/AdminGate.swift",  // the admin token's SHA-256
    ])
    func macChecksUseConstantTimeEquals(_ path: String) throws {
        #expect(try Self.text(path).contains("ConstantTime.equals("), "\(path) compares a MAC without ConstantTime.equals")
    }

    @Test func theManagementSignatureIsCheckedByCallbackVerifier() throws {
        let source = try Self.text("UpServer/Objects/ManagementAuthenticator.swift")
        #expect(source.contains("CallbackVerifier(") && source.contains("verifier.verify("))
    }

    @Test func apiKeysAreLookedUpByTheirSHA256() throws {
        let source = try Self.text("BizServer/ClientDirectory.swift")
        // Configured keys and stored keys (`LiveAPIKeys`) alike are found by the hash of the key
        // presented: configured ones by its digest's four words, stored ones by its hex.
        #expect(source.contains("let digest = APIKeyDigest(of: key)"))
        #expect(source.contains("callersByKeyDigest[digest]") && source.contains("stored?.lookup(hash: digest.hex)"))
        #expect(try Self.text("BizServer/APIKeyDigest.swift").contains("BizServerConfiguration.apiKeyDigest(apiKey)"))
        #expect(try Self.text("BizServer/BizServerConfiguration+JSON.swift").contains("SHA256.hash("))
    }

    /// No `==` / `!=` next to a name that holds a signature, MAC or secret digest in the files
    /// that authenticate requests.
    @Test(arguments: [
        "UpCore/Auth/UpToken.swift", "UpCore/Auth/KeyRing.swift", "UpCore/Callback/CallbackVerifier.swift",
        "UpCore/Callback/QBoxSignature.swift", "UpCore/Callback/QiniuSignature.swift", "UpCore/Upload/BlockContext.swift",
        "BizServer/CallbackAuthenticator.swift", "BizServer/ClientDirectory.swift", "BizServer/Admin/AdminGate.swift",
        "UpServer/Objects/ManagementAuthenticator.swift", "UpServer/Auth/UploadAuthorizer.swift",
    ])
    func noPlainEqualityOnMACs(_ path: String) throws {
        let pattern = try NSRegularExpression(
            pattern: #"(?i)(sign|mac|digest|authenticationcode|hmac|apikey|secret)\w*\)?\s*[!=]=|[!=]=\s*[\w.]*(sign|mac|digest|authenticationcode|hmac|apikey|secret)"#)
        // Comparisons of public values that merely mention a signature type.
        let allowed = ["contentType == QBoxSignature.formContentType"]
        for (number, line) in try Self.code(path).enumerated() where !allowed.contains(where: line.contains) {
            let range = NSRange(line.startIndex..., in: line)
            #expect(pattern.firstMatch(in: line, range: range) == nil, "\(path):\(number + 1): \(line)")
        }
    }
}
