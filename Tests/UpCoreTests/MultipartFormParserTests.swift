import Testing
import UpCore

@Suite("MultipartFormParser")
struct MultipartFormParserTests {
    typealias Event = MultipartFormParser.Event
    static let boundary = "687e0264638e43982283c7dcee4b44b3"

    /// §6, observed from the Python SDK (`put_data(tok, 'hello.txt', b'hello', params={'x:a':'A'},
    /// mime_type='text/plain', fname='h.txt', metadata={'x-qn-meta-color':'red'})`). The capture
    /// elides the token; §10.1 (a) has the same length, so Content-Length is the observed 723.
    static let token = "test-ak:ecymgRTLfTGN1cuFfAx5Bn0ZP4U=:eyJzY29wZSI6Im15YnVja2V0IiwiZGVhZGxpbmUiOjE5MDAwMDAwMDB9"
    static let pythonBody = Array(
        ("--\(boundary)\r\nContent-Disposition: form-data; name=\"token\"\r\n\r\n\(token)\r\n"
            + "--\(boundary)\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nhello.txt\r\n"
            + "--\(boundary)\r\nContent-Disposition: form-data; name=\"crc32\"\r\n\r\n907060870\r\n"
            + "--\(boundary)\r\nContent-Disposition: form-data; name=\"x:a\"\r\n\r\nA\r\n"
            + "--\(boundary)\r\nContent-Disposition: form-data; name=\"x-qn-meta-color\"\r\n\r\nred\r\n"
            + "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"h.txt\"\r\n"
            + "Content-Type: text/plain\r\n\r\nhello\r\n"
            + "--\(boundary)--\r\n").utf8)

    static let pythonEvents: [Event] = [
        .partStart(name: "token", filename: nil, contentType: nil), .partData(Array(token.utf8)), .partEnd,
        .partStart(name: "key", filename: nil, contentType: nil), .partData(Array("hello.txt".utf8)), .partEnd,
        .partStart(name: "crc32", filename: nil, contentType: nil), .partData(Array("907060870".utf8)), .partEnd,
        .partStart(name: "x:a", filename: nil, contentType: nil), .partData(Array("A".utf8)), .partEnd,
        .partStart(name: "x-qn-meta-color", filename: nil, contentType: nil), .partData(Array("red".utf8)), .partEnd,
        .partStart(name: "file", filename: "h.txt", contentType: "text/plain"), .partData(Array("hello".utf8)), .partEnd,
    ]

    /// Feeds `pieces`, finishes, and merges adjacent data events (their split is not meaningful).
    static func parse(_ pieces: [[UInt8]], boundary: String = boundary) throws(UpError) -> [Event] {
        var parser = try MultipartFormParser(boundary: boundary)
        var events: [Event] = []
        for piece in pieces {
            for event in try parser.feed(piece) {
                if case .partData(let more) = event, case .partData(let data)? = events.last {
                    events[events.count - 1] = .partData(data + more)
                } else {
                    events.append(event)
                }
            }
        }
        try parser.finish()
        return events
    }

    static func text(_ string: String) -> [UInt8] { Array(string.utf8) }

    @Test func parsesThePythonRequestByteForByte() throws {
        #expect(Self.pythonBody.count == 723)
        let contentType = "multipart/form-data; boundary=687e0264638e43982283c7dcee4b44b3"
        #expect(MultipartFormParser.boundary(fromContentType: contentType) == Self.boundary)
        #expect(try Self.parse([Self.pythonBody]) == Self.pythonEvents)
    }

    @Test func everySplitPositionGivesTheSameEvents() throws {
        for split in 0...Self.pythonBody.count {
            let pieces = [Array(Self.pythonBody[..<split]), Array(Self.pythonBody[split...])]
            #expect(try Self.parse(pieces) == Self.pythonEvents, "split at \(split)")
        }
        #expect(try Self.parse(Self.pythonBody.map { [$0] }) == Self.pythonEvents)
    }

    @Test func randomPieceSizesGiveTheSameEvents() throws {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<200 {
            var pieces: [[UInt8]] = []
            var index = 0
            while index < Self.pythonBody.count {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let size = Int(seed >> 33) % 48
                pieces.append(Array(Self.pythonBody[index..<min(index + size, Self.pythonBody.count)]))
                index += size
            }
            #expect(try Self.parse(pieces) == Self.pythonEvents)
        }
    }

    @Test func fiveMiBFileStreamsWithBoundedPieces() throws {
        // Content full of near-delimiters: CRLF, "--", and the boundary's own prefix.
        let trap = Self.text("\r\n--687e0264638e43982283c7dcee4b44b\r\n-\r\r\n--x")
        var file: [UInt8] = []
        file.reserveCapacity(5 << 20)
        var counter: UInt8 = 0
        while file.count < 5 << 20 {
            file += trap
            for _ in 0..<200 {
                file.append(counter)
                counter &+= 7
            }
        }
        file = Array(file.prefix(5 << 20))
        let head = Self.text(
            "--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n\r\n")
        let body = head + file + Self.text("\r\n--\(Self.boundary)--\r\n")
        var parser = try MultipartFormParser(boundary: Self.boundary)
        let pieceSize = 64 * 1024
        let bound = pieceSize + Self.boundary.utf8.count + 4
        var received: [UInt8] = []
        received.reserveCapacity(file.count)
        var ends = 0
        var index = 0
        while index < body.count {
            for event in try parser.feed(Array(body[index..<min(index + pieceSize, body.count)])) {
                switch event {
                case .partData(let data):
                    #expect(data.count <= bound)
                    received += data
                case .partEnd: ends += 1
                case .partStart(let name, let filename, _): #expect(name == "file" && filename == "big.bin")
                }
            }
            index += pieceSize
        }
        try parser.finish()
        #expect(ends == 1)
        #expect(received == file)
    }

    @Test func preambleEpiloguePaddingAndEmptyParts() throws {
        let body = Self.text(
            "ignored preamble\r\n--b \t\r\nContent-Disposition: form-data; name=\"e\"\r\n\r\n\r\n"
                + "--b\r\ncontent-disposition: FORM-DATA; filename=\"a\\\"b\\\\c\\d.txt\"; name=x\r\n"
                + "CONTENT-TYPE:  image/png \r\nX-Other: 1\r\n\r\n\r\n\r\n--b--  \r\nignored epilogue --b--")
        #expect(try Self.parse([body], boundary: "b") == [
            .partStart(name: "e", filename: nil, contentType: nil), .partEnd,
            .partStart(name: "x", filename: #"a"b\c\d.txt"#, contentType: "image/png"), .partData([13, 10]), .partEnd,
        ])
        // The close delimiter may end the body without a CRLF.
        #expect(try Self.parse([Self.text("--b\r\nContent-Disposition: form-data; name=a\r\n\r\n1\r\n--b--")], boundary: "b")
            == [.partStart(name: "a", filename: nil, contentType: nil), .partData([0x31]), .partEnd])
    }

    @Test func boundaryFromContentType() {
        #expect(MultipartFormParser.boundary(fromContentType: #"Multipart/Form-Data; charset=utf-8; BOUNDARY="a b;c""#) == "a b;c")
        #expect(MultipartFormParser.boundary(fromContentType: "multipart/form-data;boundary=x") == "x")
        #expect(MultipartFormParser.boundary(fromContentType: "multipart/mixed; boundary=x") == nil)
        #expect(MultipartFormParser.boundary(fromContentType: "multipart/form-data") == nil)
        #expect(MultipartFormParser.boundary(fromContentType: #"multipart/form-data; boundary="x"#) == nil)
    }

    static let head = "--b\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\n"
    static let malformed: [(String, [UInt8], String)] = [
        ("no boundary", text("just some text\r\n"), "no boundary found"),
        ("missing end", text(head + "value\r\n"), "ended before the close delimiter"),
        ("bare LF after boundary", text("--b\nContent-Disposition: form-data; name=\"f\"\n\nv\n--b--\n"), "bare LF"),
        ("CR without LF", text("--b\rX"), "missing CRLF after boundary"),
        ("garbage after end", text(head + "v\r\n--b--xyz"), "garbage after close delimiter"),
        ("garbage after boundary", text(head + "v\r\n--bb\r\n"), "garbage after boundary"),
        ("header too long", text("--b\r\nContent-Disposition: form-data; name=\"f\"\r\nX: " + String(repeating: "a", count: 17_000)), "header block longer"),
        ("header without colon", text("--b\r\nContent-Disposition form-data\r\n\r\nv\r\n--b--"), "without a name and colon"),
        ("no disposition", text("--b\r\nContent-Type: text/plain\r\n\r\nv\r\n--b--"), "without Content-Disposition"),
        ("not form-data", text("--b\r\nContent-Disposition: attachment; name=f\r\n\r\nv\r\n--b--"), "not form-data"),
        ("no name", text("--b\r\nContent-Disposition: form-data; filename=\"a\"\r\n\r\nv\r\n--b--"), "without name"),
        ("bare CR in headers", text("--b\r\nContent-Disposition: form-data; name=f\rX: y\r\n\r\nv\r\n--b--"), "bare CR or LF"),
        ("field too long", text(head + String(repeating: "v", count: 65_537) + "\r\n--b--"), "longer than 65536"),
        ("not UTF-8", text("--b\r\nContent-Disposition: form-data; name=\"") + [0xFF] + text("\"\r\n\r\nv\r\n--b--"), "not UTF-8"),
    ]

    @Test("Malformed bodies are 400 with distinct details", arguments: malformed)
    func rejects(name: String, body: [UInt8], detail: String) {
        let error = #expect(throws: UpError(.badRequest)) { try Self.parse([body], boundary: "b") }
        #expect(error?.detail.contains(detail) == true, "\(error?.detail ?? "")")
    }

    @Test func tooManyPartsAndFailedStaysFailed() throws {
        let part = Self.text(Self.head + "v\r\n")
        var body: [UInt8] = []
        for _ in 0..<1001 { body += part }
        var parser = try MultipartFormParser(boundary: "b")
        let error = #expect(throws: UpError(.badRequest)) { _ = try parser.feed(body) }
        #expect(error?.detail.contains("more than 1000 parts") == true)
        #expect(throws: UpError(.badRequest)) { _ = try parser.feed([]) }
        #expect(throws: UpError(.badRequest)) { try parser.finish() }
    }

    @Test func fileDataIsNotLimitedLikeFields() throws {
        let body = Self.text("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\"\r\n\r\n")
            + [UInt8](repeating: 0x61, count: 100_000) + Self.text("\r\n--b--\r\n")
        let events = try Self.parse([body], boundary: "b")
        #expect(events.first == .partStart(name: "file", filename: "", contentType: nil))
        #expect(events.count == 3)
    }

    @Test("Invalid boundaries are refused", arguments: ["", String(repeating: "a", count: 71), "a ", "a\"b", "é"])
    func refusesBoundary(boundary: String) {
        #expect(throws: UpError(.badRequest)) { try MultipartFormParser(boundary: boundary) }
    }
}
