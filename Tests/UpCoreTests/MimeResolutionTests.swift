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
}
