import Testing
import UpCore

@Suite("CompleteMultipartRequest")
struct CompleteMultipartRequestTests {
    static func parse(_ text: String) throws(UpError) -> CompleteMultipartRequest {
        try CompleteMultipartRequest.parse(Array(text.utf8))
    }

    /// §5: the Python SDK sends every key, `null` for unset ones.
    @Test func acceptsPythonNulls() throws {
        let request = try Self.parse(
            #"{"parts":[{"etag":"e1","partNumber":1},{"etag":"e3","partNumber":3}],"fname":null,"mimeType":null,"customVars":null,"metadata":null}"#)
        #expect(request == CompleteMultipartRequest(parts: [.init(etag: "e1", partNumber: 1), .init(etag: "e3", partNumber: 3)]))
    }

    @Test func readsEveryMember() throws {
        let request = try Self.parse(
            #"{"parts":[{"etag":"e","partNumber":1,"size":5}],"fname":"big.bin","mimeType":"application/x-test","customVars":{"x:foo":"bar","x:n":1,"y":"drop","x:z":null,"x:foo":"baz"},"metadata":{"x-qn-meta-a":"b","other":"c"},"extra":1}"#)
        #expect(request.fname == "big.bin" && request.mimeType == "application/x-test")
        #expect(request.customVariables.map(\.name) == ["x:n", "x:foo"])
        #expect(request.customVariables.map(\.value) == ["1", "baz"])
        #expect(request.metadata.map(\.name) == ["x-qn-meta-a"])
    }

    @Test func goStyleOmissionAndRoundTrip() throws {
        let request = try Self.parse(#"{"parts":[{"etag":"e","partNumber":10000}]}"#)
        #expect(request.fname == nil && request.customVariables.isEmpty)
        let full = CompleteMultipartRequest(
            parts: [.init(etag: "a", partNumber: 2)], fname: "f", mimeType: "m", customVariables: [("x:a", "1")],
            metadata: [("x-qn-meta-b", "2")])
        #expect(try Self.parse(full.serialized()) == full)
        #expect(request.serialized().contains(#""fname":null"#))
    }

    static let rejections: [(String, UpError.Code)] = [
        ("[1]", .invalidJSON),
        ("{", .invalidJSON),
        ("{}", .invalidJSON),
        (#"{"parts":{}}"#, .invalidJSON),
        (#"{"parts":[]}"#, .badRequest),
        (#"{"parts":[{"partNumber":1}]}"#, .invalidJSON),
        (#"{"parts":[{"etag":"","partNumber":1}]}"#, .invalidJSON),
        (#"{"parts":[{"etag":"e","partNumber":"1"}]}"#, .invalidJSON),
        (#"{"parts":[{"etag":"e","partNumber":0}]}"#, .badRequest),
        (#"{"parts":[{"etag":"e","partNumber":10001}]}"#, .badRequest),
        (#"{"parts":[{"etag":"e","partNumber":2},{"etag":"e","partNumber":1}]}"#, .badRequest),
        (#"{"parts":[{"etag":"e","partNumber":2},{"etag":"e","partNumber":2}]}"#, .badRequest),
        (#"{"parts":[{"etag":"e","partNumber":1}],"fname":1}"#, .invalidJSON),
        (#"{"parts":[{"etag":"e","partNumber":1}],"customVars":[]}"#, .invalidJSON),
        (#"{"parts":[{"etag":"e","partNumber":1}],"metadata":{"x-qn-meta-a":{}}}"#, .invalidJSON),
    ]

    @Test("Rejections are 400", arguments: rejections)
    func rejects(body: String, code: UpError.Code) {
        let error = #expect(throws: UpError(code)) { try Self.parse(body) }
        #expect(error?.code.status == 400)
    }
}
