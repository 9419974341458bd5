import Testing
import UpCore

@Suite("UpError")
struct UpErrorTests {
    static let table: [(UpError.Code, Int, String)] = [
        (.tokenNotSpecified, 401, "token not specified"), (.badToken, 401, "bad token"),
        (.expiredToken, 401, "expired token"), (.unknownAccessKey, 401, "bad token"), (.badSignature, 401, "bad token"),
        (.noSuchBucket, 631, "no such bucket"), (.keyMismatch, 403, "key doesn't match with scope"),
        (.limitedMimeType, 403, "limited mimeType"), (.fileTooSmall, 403, "fsize too small"),
        (.fileTooLarge, 413, "fsize too large"), (.crc32Mismatch, 406, "crc32 not match"),
        (.fileExists, 614, "file exists"), (.callbackFailed, 579, "callback failed"),
        (.noSuchUploadID, 612, "no such uploadId"), (.invalidContext, 701, "invalid ctx"),
        (.badRequest, 400, "bad request"), (.fileNotSpecified, 400, "file is not specified in multipart"),
        (.internalError, 599, "server operation failed"), (.tooFrequent, 573, "too frequent"),
        (.insufficientStorage, 503, "insufficient storage"),
    ]

    @Test("Statuses and client texts follow §8", arguments: table)
    func row(code: UpError.Code, status: Int, message: String) {
        #expect(code.status == status)
        #expect(code.message == message)
    }

    @Test func namesAreUniqueAndMetricSafe() {
        let names = UpError.Code.all.map(\.name)
        #expect(Set(names).count == names.count)
        for name in names {
            #expect(name.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" })
        }
    }

    @Test func equalityIgnoresDetail() {
        #expect(UpError(.badToken, detail: "a") == UpError(.badToken, detail: "b"))
        #expect(UpError(.badToken) != UpError(.unknownAccessKey))
    }

    @Test func responseBodyHidesDetail() {
        let error = UpError(.unknownAccessKey, detail: "access key secret-ish")
        #expect(error.responseBody == #"{"error":"bad token"}"#)
        #expect(error.description.contains("unknown_access_key"))
    }
}
