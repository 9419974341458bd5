// The streaming multipart/form-data parser.
//
// Input: the boundary (a field, also tried as a Content-Type), a count byte and that many split
// bytes, then the body. The body is parsed in one piece, in the pieces the split bytes choose,
// and (when short) one byte at a time: all three must give the same events (adjacent data
// merged) or the same error. Also checked: the events are well formed (start, data…, end), no
// data event is empty or longer than its piece plus the delimiter (the documented memory bound).
@testable import UpCore

enum MultipartTarget {
    typealias Event = MultipartFormParser.Event

    struct Outcome: Equatable {
        var events: [Event]
        /// `code name: detail` of the error, if any.
        var error: String?
    }

    static func run(_ data: [UInt8]) {
        var input = FuzzInput(data)
        let boundary = input.text()
        let splitCount = Int(input.byte() % 8)
        let splitBytes = (0..<splitCount).map { _ in input.byte() }
        let body = input.rest()

        _ = MultipartFormParser.boundary(fromContentType: boundary)
        if let parsed = MultipartFormParser.boundary(fromContentType: "multipart/form-data; boundary=" + boundary) {
            require(!parsed.isEmpty, "empty boundary from a Content-Type")
        }
        guard case .success = attempt({ () throws(UpError) in try MultipartFormParser(boundary: boundary) }) else {
            return
        }
        let delimiterCount = 4 + boundary.utf8.count
        let whole = parse(boundary, [body], delimiterCount: delimiterCount)
        let cuts = splitBytes.map { Int($0) * body.count / 255 }.sorted()
        var pieces: [[UInt8]] = []
        var start = 0
        for cut in cuts + [body.count] {
            pieces.append(Array(body[start..<cut]))
            start = cut
        }
        let split = parse(boundary, pieces, delimiterCount: delimiterCount)
        require(
            split == whole,
            "split at \(cuts) gives \(describe(split)), one piece \(describe(whole)); boundary \(show(boundary))")
        if body.count <= 2048 {
            let bytewise = parse(boundary, body.map { [$0] }, delimiterCount: delimiterCount)
            require(bytewise == whole, "byte by byte gives \(describe(bytewise)), one piece \(describe(whole))")
        }
    }

    /// Feeds `pieces`, finishes; merges adjacent data events. Events seen before an error are
    /// dropped (a one-piece feed that throws returns none), so outcomes compare across splits.
    static func parse(_ boundary: String, _ pieces: [[UInt8]], delimiterCount: Int) -> Outcome {
        var parser: MultipartFormParser
        do { parser = try MultipartFormParser(boundary: boundary) } catch { return Outcome(events: [], error: show(error)) }
        var events: [Event] = []
        var inPart = false
        do {
            for piece in pieces {
                for event in try parser.feed(piece) {
                    switch event {
                    case .partStart:
                        require(!inPart, "partStart inside a part")
                        inPart = true
                    case .partData(let data):
                        require(inPart, "partData outside a part")
                        require(!data.isEmpty, "empty partData")
                        require(
                            data.count <= piece.count + delimiterCount,
                            "partData of \(data.count) bytes from a piece of \(piece.count)")
                    case .partEnd:
                        require(inPart, "partEnd outside a part")
                        inPart = false
                    }
                    if case .partData(let more) = event, case .partData(let data)? = events.last {
                        events[events.count - 1] = .partData(data + more)
                    } else {
                        events.append(event)
                    }
                }
            }
            try parser.finish()
        } catch {
            // The parser stays failed: the same error again.
            let again = attempt { () throws(UpError) in try parser.feed([0x0D]) }
            if case .failure(let repeated) = again {
                require(repeated.detail == error.detail, "a failed parser answered \(show(repeated)) after \(show(error))")
            } else {
                require(false, "a failed parser accepted more input")
            }
            return Outcome(events: [], error: show(error))
        }
        require(!inPart, "finish() accepted a body that ends inside a part")
        return Outcome(events: events, error: nil)
    }

    static func describe(_ outcome: Outcome) -> String {
        if let error = outcome.error { return "error \(show(error))" }
        let parts = outcome.events.map { event -> String in
            switch event {
            case .partStart(let name, let filename, let contentType):
                "start(\(show(name)), \(filename.map(show) ?? "nil"), \(contentType.map(show) ?? "nil"))"
            case .partData(let data): "data(\(data.count): \(show(data)))"
            case .partEnd: "end"
            }
        }
        return "[" + parts.joined(separator: ", ") + "]"
    }

    static func seeds(_ vectors: Vectors) -> [[UInt8]] {
        let boundary = "687e0264638e43982283c7dcee4b44b3"
        let token = vectors.string("uptoken_a_bucket_only", "token") ?? "t"
        let python =
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"token\"\r\n\r\n\(token)\r\n"
            + "--\(boundary)\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nhello.txt\r\n"
            + "--\(boundary)\r\nContent-Disposition: form-data; name=\"x:a\"\r\n\r\nA\r\n"
            + "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"h.txt\"\r\n"
            + "Content-Type: text/plain\r\n\r\nhello\r\n" + "--\(boundary)--\r\n"
        let browser =
            "preamble\r\n--a b \t\r\ncontent-disposition: form-data;\r\n name=\"f\\\"1\"; filename=C:\\x\\y.txt\r\n"
            + "CONTENT-TYPE:  image/png ; q=1\r\n\r\n\r\n--a \r\n--a b\r\n--a b\r\nContent-Disposition: form-data; name=\"\"\r\n\r\n"
            + "\r\n--a b--  \r\nepilogue --a b"
        return [
            input { $0.field(boundary); $0.byte(3); $0.raw([40, 128, 250]); $0.rest(python) },
            input { $0.field("a b"); $0.byte(1); $0.raw([77]); $0.rest(browser) },
            input { $0.field("x"); $0.byte(0); $0.rest("--x\r\n\r\n\r\n--x--") },
        ]
    }
}
