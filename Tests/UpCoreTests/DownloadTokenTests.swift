import Foundation
import NativeCrypto
import Testing
import UpCore

/// `DownloadToken` against URLs the Python SDK signed (`Auth('test-ak', 'test-sk').token(url)`,
/// qiniu==7.18.0, the body of `private_download_url`).
@Suite("DownloadToken")
struct DownloadTokenTests {
    let keys = KeyRing(["test-ak": "test-sk"])
    let mac = HMACSHA1(key: Array("test-sk".utf8))

    @Test func acceptsWhatTheSDKSignsUnderAnyGivenBase() throws {
        let target = "/dl/demo/dir/%E4%B8%83.txt?e=1900003600&token=test-ak:tJhoM16juLm0THC6SkkHsd9iQyM="
        let bases = ["https://other", "http://127.0.0.1:9000"]
        #expect(try DownloadToken.verify(target: target, bases: bases, keys: keys, now: 1_900_003_600) == "test-ak")
        // A query of its own and a base with a path prefix (behind a proxy).
        let proxied = "/dl/demo/a?x=1&e=1900003600&token=test-ak:VEE_qTZjGoVx70v_U5YKXhcpJUU="
        #expect(throws: Never.self) {
            try DownloadToken.verify(target: proxied, bases: ["https://cdn.example/up"], keys: keys, now: 1)
        }
        let signed = DownloadToken.sign(
            url: "http://127.0.0.1:9000/dl/demo/dir/%E4%B8%83.txt", deadline: 1_900_003_600, accessKey: "test-ak", mac: mac)
        #expect(signed == "http://127.0.0.1:9000" + target)
    }

    @Test func refusesExpiredForgedAndMissing() {
        let target = "/dl/demo/dir/%E4%B8%83.txt?e=1900003600&token=test-ak:tJhoM16juLm0THC6SkkHsd9iQyM="
        let base = ["http://127.0.0.1:9000"]
        #expect(throws: DownloadToken.Refusal.expired) {
            try DownloadToken.verify(target: target, bases: base, keys: keys, now: 1_900_003_601)
        }
        for (forged, bases) in [
            (target.replacingOccurrences(of: "e=1900003600", with: "e=1900009999"), base),
            (target.replacingOccurrences(of: "%E4%B8%83", with: "x"), base),
            (target, ["http://127.0.0.1:9001"]),
            (target.replacingOccurrences(of: "test-ak:", with: "ghost:"), base),
        ] {
            #expect(throws: DownloadToken.Refusal.forged) {
                try DownloadToken.verify(target: forged, bases: bases, keys: keys, now: 1)
            }
        }
        for missing in ["/dl/demo/a", "/dl/demo/a?e=1", "/dl/demo/a?token=test-ak:x", "/dl/demo/a?e=x&token=test-ak:y"] {
            #expect(throws: DownloadToken.Refusal.missing) {
                try DownloadToken.verify(target: missing, bases: base, keys: keys, now: 1)
            }
        }
    }
}
