@testable import BizServer
import Testing

@Suite struct KeyLifetimeTests {
    @Test(arguments: [
        ("1s", 1), ("3600s", 3600), ("30m", 1800), ("12h", 43_200), ("90d", 7_776_000), ("3650d", 315_360_000),
        ("87600h", 315_360_000),
    ] as [(String, Int64)])
    func readsAWholeNumberOfUnits(text: String, seconds: Int64) {
        #expect(KeyLifetime.seconds(text) == seconds)
    }

    @Test(arguments: [
        "", "d", "90", "0d", "00d", "090d", "-1d", "+1d", "1.5d", "1w", "1D", "90 d", " 90d", "3651d", "87601h",
        "99999999999d", "9223372036854775807s", "１d",
    ])
    func refusesAnythingElse(text: String) {
        #expect(KeyLifetime.seconds(text) == nil, "\(text)")
    }
}
