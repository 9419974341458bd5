import Testing
import UpCore

@Suite("MimeTypes")
struct MimeTypesTests {
    @Test func extensionToType() {
        #expect(MimeTypes.forExtension(".jpg") == "image/jpeg")
        #expect(MimeTypes.forExtension("JPEG") == "image/jpeg")
        #expect(MimeTypes.forExtension(".MP4") == "video/mp4")
        #expect(MimeTypes.forExtension(".json") == "application/json")
        #expect(MimeTypes.forExtension(".unknown") == nil)
        #expect(MimeTypes.forExtension("") == nil)
    }

    @Test func typeToExtensionWithLeadingDot() {
        #expect(MimeTypes.extension(for: "image/jpeg") == ".jpg")
        #expect(MimeTypes.extension(for: "Text/Plain; charset=utf-8") == ".txt")
        #expect(MimeTypes.extension(for: "text/xml") == ".xml")
        #expect(MimeTypes.extension(for: "application/x-unknown") == nil)
        #expect(MimeTypes.extension(for: "application/octet-stream") == nil)
    }

    @Test func everyTypeMapsBackToOneOfItsExtensions() throws {
        for ext in ["jpg", "png", "gif", "webp", "pdf", "zip", "gz", "mp3", "mp4", "mov", "txt", "html", "csv", "xlsx"] {
            let mime = try #require(MimeTypes.forExtension(ext))
            let back = try #require(MimeTypes.extension(for: mime))
            #expect(MimeTypes.forExtension(back) == mime)
        }
    }

    @Test func fileNamesAndKeys() {
        #expect(MimeTypes.forFileName("a.tar.gz") == "application/gzip")
        #expect(MimeTypes.forFileName("photos/cat.JPG") == "image/jpeg")
        #expect(MimeTypes.forFileName("dir.png/noext") == nil)
        #expect(MimeTypes.forFileName("trailingdot.") == nil)
        #expect(MimeTypes.forFileName("") == nil)
        #expect(MimeTypes.forFileName("dir/") == nil)
    }
}
