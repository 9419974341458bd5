import Basics
import Foundation
import JSONText
import Testing

@Suite("Logger")
struct LoggerTests {
    @Test func writesOneValidJSONObjectPerLine() throws {
        let sink = LogSink.memory()
        let log = Logger(label: "test", sink: sink)
        log.info("hello \"world\"\n", ["path": "/v1/x", "status": .int(200), "ok": .bool(true), "ms": .double(1.5)])
        let lines = sink.capturedLines
        try #require(lines.count == 1)
        #expect(lines[0].hasSuffix("}\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(object["msg"] as? String == "hello \"world\"\n")
        #expect(object["level"] as? String == "info")
        #expect(object["logger"] as? String == "test")
        #expect(object["path"] as? String == "/v1/x")
        #expect(object["status"] as? Int == 200)
        #expect(object["ok"] as? Bool == true)
        #expect((object["ts"] as? String)?.hasSuffix("Z") == true)
    }

    @Test(arguments: [0, 7, -7, 10, 200, -1_000_000, Int64.max, Int64.min])
    func writesIntegersAsTheirDecimalDigits(value: Int64) throws {
        let sink = LogSink.memory()
        Logger(label: "test", sink: sink).info("n", ["n": .int(value)])
        let line = try #require(sink.capturedLines.first)
        #expect(line.hasSuffix("\"n\":\(value)}\n"))
    }

    /// The access log's `duration_ms` used to be written by `String(Double)`; the byte writer
    /// must give the same text, so readers of the log see no change.
    @Test(arguments: [0, 1, 5, 10, 100, 310, 311, 999, 1000, 1001, 12_500, 123_456_789, -311, -1000])
    func writesThousandthsAsTheirDoubleWouldRead(value: Int64) throws {
        let sink = LogSink.memory()
        Logger(label: "test", sink: sink).log(.info, "n") { $0.add("ms", thousandths: value) }
        let line = try #require(sink.capturedLines.first)
        #expect(line.hasSuffix("\"ms\":\(String(Double(value) / 1000))}\n"))
    }

    @Test func writesByteWrittenFieldsInOrderAndEscaped() throws {
        let sink = LogSink.memory()
        Logger(label: "test", sink: sink).log(.info, "request") { line in
            line.add("path", "/a \"b\"\n")
            line.add("status", Int64(200))
            line.add("client", value: .string("démo"))
            line.add("ok", value: .bool(true))
        }
        let text = try #require(sink.capturedLines.first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["path"] as? String == "/a \"b\"\n")
        #expect(object["status"] as? Int == 200)
        #expect(object["client"] as? String == "démo")
        #expect(object["ok"] as? Bool == true)
        #expect(text.contains(#""msg":"request","path":"#))
        #expect(Logger(label: "quiet", minimumLevel: .warning, sink: sink).log(.info, "x") { _ in Issue.record("written below the level") } == ())
    }

    @Test func dropsLinesBelowTheMinimumLevel() {
        let sink = LogSink.memory()
        let log = Logger(label: "test", minimumLevel: .warning, sink: sink)
        log.info("quiet")
        log.debug("quieter")
        log.error("loud")
        #expect(sink.capturedLines.count == 1)
        #expect(sink.capturedLines.first?.contains("loud") == true)
    }

    @Test func escapesControlCharacters() {
        #expect(JSONText.quoted("a\u{01}b\\") == "\"a\\u0001b\\\\\"")
    }
}
