import Testing
import UpCore

@Suite("MimeSniffer")
struct MimeSnifferTests {
    static func bytes(_ ascii: String) -> [UInt8] { Array(ascii.utf8) }
    static let padding = [UInt8](repeating: 0x00, count: 32)

    static let binaries: [(String, [UInt8], String)] = [
        ("png", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + padding, "image/png"),
        ("jpeg", [0xFF, 0xD8, 0xFF, 0xE0] + padding, "image/jpeg"),
        ("gif", bytes("GIF89a") + padding, "image/gif"),
        ("webp", bytes("RIFF") + [0, 0, 0, 0] + bytes("WEBPVP8 "), "image/webp"),
        ("wav", bytes("RIFF") + [0, 0, 0, 0] + bytes("WAVEfmt "), "audio/wav"),
        ("bmp", bytes("BM") + [0x36, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0], "image/bmp"),
        ("tiff le", [0x49, 0x49, 0x2A, 0x00] + padding, "image/tiff"),
        ("tiff be", [0x4D, 0x4D, 0x00, 0x2A] + padding, "image/tiff"),
        ("pdf", bytes("%PDF-1.7\n"), "application/pdf"),
        ("zip", [0x50, 0x4B, 0x03, 0x04] + padding, "application/zip"),
        ("gzip", [0x1F, 0x8B, 0x08, 0x00] + padding, "application/gzip"),
        ("mp4", [0, 0, 0, 0x20] + bytes("ftypisom") + padding, "video/mp4"),
        ("mov", [0, 0, 0, 0x14] + bytes("ftypqt  ") + padding, "video/quicktime"),
        ("m4a", [0, 0, 0, 0x20] + bytes("ftypM4A ") + padding, "audio/mp4"),
        ("heic", [0, 0, 0, 0x18] + bytes("ftypheic") + padding, "image/heic"),
        ("mp3 id3", bytes("ID3") + [0x04, 0x00] + padding, "audio/mpeg"),
        ("mp3 frame", [0xFF, 0xFB, 0x90, 0x64] + padding, "audio/mpeg"),
        ("aac adts", [0xFF, 0xF1, 0x50, 0x80] + padding, "audio/aac"),
        ("ogg", bytes("OggS") + padding, "audio/ogg"),
        ("flac", bytes("fLaC") + padding, "audio/flac"),
        ("webm", [0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x82, 0x84] + bytes("webm") + padding, "video/webm"),
        ("mkv", [0x1A, 0x45, 0xDF, 0xA3, 0xA3, 0x42, 0x82, 0x88] + bytes("matroska") + padding, "video/x-matroska"),
    ]

    @Test("Magic numbers", arguments: binaries)
    func sniffsBinary(name: String, content: [UInt8], expected: String) {
        #expect(MimeSniffer.sniff(content) == expected)
    }

    static let texts: [(String, String?)] = [
        ("hello world\n", "text/plain"),
        ("  {\"key\": \"v\"}", "application/json"),
        ("[1, 2, 3]", "application/json"),
        ("{not json", "text/plain"),
        ("<!DOCTYPE html><html></html>", "text/html"),
        ("<?xml version=\"1.0\"?><svg xmlns=\"http://www.w3.org/2000/svg\"/>", "image/svg+xml"),
        ("<?xml version=\"1.0\"?><a/>", "application/xml"),
        ("七牛云存储 UTF-8 text", "text/plain"),
        ("\u{FEFF}with BOM", "text/plain"),
        ("nul\u{0}inside", nil),
        ("bell\u{7}", nil),
    ]

    @Test("Text only when clearly text", arguments: texts)
    func sniffsText(content: String, expected: String?) {
        #expect(MimeSniffer.sniff(Array(content.utf8)) == expected)
    }

    @Test func binaryGarbageAndEmptyAreUnknown() {
        #expect(MimeSniffer.sniff([]) == nil)
        #expect(MimeSniffer.sniff([0x00, 0x01, 0x02, 0x03, 0x04]) == nil)
        #expect(MimeSniffer.sniff([0xC3, 0x28, 0x41, 0x42]) == nil)  // invalid UTF-8, not truncated
    }

    @Test func windowMayCutAMultiByteCharacter() {
        let text = Array(String(repeating: "七", count: 200).utf8)  // 600 bytes; byte 512 is mid-character
        #expect(MimeSniffer.sniff(text) == "text/plain")
        #expect(MimeSniffer.sniff(Array(text.prefix(MimeSniffer.windowSize))) == "text/plain")
    }
}
