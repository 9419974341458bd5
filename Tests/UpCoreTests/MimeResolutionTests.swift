import Testing
import UpCore

@Suite("MimeResolution")
struct MimeResolutionTests {
    static func resolve(
        _ detectMime: Int?, client: String? = nil, fname: String? = nil, key: String? = nil, sniffed: String? = nil
    ) -> String {
        MimeResolution.resolve(detectMime: detectMime, clientMimeType: client, fname: fname, key: key, sniffed: sniffed)
    }

    @Test func detectMimeZeroPrefersTheClient() {
        #expect(Self.resolve(0, client: "video/mp4", fname: "a.png", key: "k.gif", sniffed: "image/jpeg") == "video/mp4")
        #expect(Self.resolve(nil, client: "video/mp4") == "video/mp4")
        #expect(Self.resolve(0, fname: "a.png", key: "k.gif", sniffed: "image/jpeg") == "image/png")
        #expect(Self.resolve(0, fname: "noext", key: "k.gif", sniffed: "image/jpeg") == "image/gif")
        #expect(Self.resolve(0, key: "k", sniffed: "image/jpeg") == "image/jpeg")
        #expect(Self.resolve(0) == "application/octet-stream")
    }

    @Test func emptyAndOctetStreamClientValuesCountAsAbsent() {
        #expect(Self.resolve(0, client: "", fname: "a.png") == "image/png")
        #expect(Self.resolve(0, client: "application/octet-stream", sniffed: "image/jpeg") == "image/jpeg")
        #expect(Self.resolve(0, client: "Application/Octet-Stream; x=1", fname: "a.txt") == "text/plain")
        #expect(Self.resolve(0, client: "application/octet-stream") == "application/octet-stream")
    }

    @Test func detectMimeNonZeroSniffsFirstAndIgnoresTheClient() {
        #expect(Self.resolve(1, client: "video/mp4", fname: "a.png", key: "k.gif", sniffed: "image/jpeg") == "image/jpeg")
        #expect(Self.resolve(1, client: "video/mp4", fname: "a.png", key: "k.gif") == "image/png")
        #expect(Self.resolve(2, client: "video/mp4", key: "k.gif") == "image/gif")
        #expect(Self.resolve(-1, client: "video/mp4") == "application/octet-stream")
        #expect(Self.resolve(1, client: "video/mp4", sniffed: "") == "application/octet-stream")
    }

    /// Where `needsSniffedType` says no, the sniffed type must not change the result (so not
    /// reading the bytes back is invisible), and a `mimeLimit` always needs it.
    @Test func whereTheSniffedTypeIsNotNeededItChangesNothing() {
        var skipped = 0
        for detectMime in [nil, 0, 1] as [Int?] {
            for client in [nil, "", "application/octet-stream", "text/plain"] as [String?] {
                for fname in [nil, "a.txt", "noext"] as [String?] {
                    for key in [nil, "k.png", "k"] as [String?] {
                        let needs = MimeResolution.needsSniffedType(
                            detectMime: detectMime, mimeLimit: nil, clientMimeType: client, fname: fname, key: key)
                        #expect(MimeResolution.needsSniffedType(
                            detectMime: detectMime, mimeLimit: "image/*", clientMimeType: client, fname: fname, key: key))
                        guard !needs else { continue }
                        skipped += 1
                        for sniffed in ["image/gif", "video/mp4"] {
                            #expect(
                                Self.resolve(detectMime, client: client, fname: fname, key: key, sniffed: sniffed)
                                    == Self.resolve(detectMime, client: client, fname: fname, key: key),
                                "detectMime \(String(describing: detectMime)) client \(String(describing: client)) fname \(String(describing: fname)) key \(String(describing: key))")
                        }
                    }
                }
            }
        }
        // Most real uploads: a client type, or a name with an extension, and no detectMime.
        #expect(skipped > 20)
    }
}
