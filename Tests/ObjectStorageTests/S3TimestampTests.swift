import ObjectStorage
import Testing

/// `LastModified` as AWS and SeaweedFS write it; the expected values are from `date -u -d … +%s`.
@Suite("S3Timestamp")
struct S3TimestampTests {
    @Test func readsUTCTimesWithAndWithoutFractions() {
        #expect(S3Timestamp.unixSeconds("2026-12-02T15:36:36Z") == 1_796_225_796)
        #expect(S3Timestamp.unixSeconds("2026-12-02T15:36:36.000Z") == 1_796_225_796)
        #expect(S3Timestamp.unixSeconds("2026-12-02T15:36:36.250Z") == 1_796_225_796.25)
        #expect(S3Timestamp.unixSeconds("2000-02-29T23:59:59Z") == 951_868_799)
        #expect(S3Timestamp.unixSeconds("1970-01-01T00:00:00Z") == 0)
    }

    @Test func refusesWhatIsNotOne() {
        for text in ["", "2026-12-02 15:36:36Z", "2026-12-02T15:36:36", "2026-13-02T15:36:36Z",
                     "2026-12-02T15:36:36.Z", "2026-12-02T15:36:36+01:00", "Wed, 02 Dec 2026 15:36:36 GMT"] {
            #expect(S3Timestamp.unixSeconds(text) == nil, "\(text)")
        }
    }
}
