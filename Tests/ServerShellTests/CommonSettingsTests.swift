import Basics
import HTTPKit
import ServerShell
import Testing

/// `cors.allowedOrigins`, read for both servers in one place: off by default, and an entry a
/// browser could never send stops the server with a line that says how to write it.
@Suite("CommonSettings")
struct CommonSettingsTests {
    static func read(_ text: String) throws(ConfigurationError) -> CommonSettings {
        let file = try ConfigurationFile.parse(Array(text.utf8), source: "f.json")
        let settings = try CommonSettings.read(file, defaultPort: 1, defaultDataDirectory: "d")
        try file.finish()
        return settings
    }

    @Test func corsIsOffUnlessOriginsAreGiven() throws {
        #expect(try Self.read("{}").cors == .off)
        #expect(try Self.read(#"{"cors": {}}"#).cors == .off)
        let settings = try Self.read(#"{"cors": {"allowedOrigins": ["http://127.0.0.1:8080", "https://app.example"]}}"#)
        #expect(settings.cors.allowedOrigins == ["http://127.0.0.1:8080", "https://app.example"])
        #expect(settings.cors.allows("https://app.example") && !settings.cors.allows("https://other.example"))
    }

    @Test func anEntryThatIsNotAnOriginNamesItsPlace() {
        #expect(throws: ConfigurationError(
            #""cors.allowedOrigins" in f.json [1] "https://app.example/" is not an origin: write scheme://host[:port] "#
                + #"with no path or trailing slash, lower case (e.g. "http://127.0.0.1:8080"), or "*""#)
        ) {
            _ = try Self.read(#"{"cors": {"allowedOrigins": ["http://a.example", "https://app.example/"]}}"#)
        }
        #expect(throws: ConfigurationError.self) { _ = try Self.read(#"{"cors": {"allowedOrigin": []}}"#) }
    }
}
