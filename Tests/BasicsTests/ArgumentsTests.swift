import Basics
import Testing

@Suite("Arguments")
struct ArgumentsTests {
    @Test func parsesOptionsFlagsAndPositionals() throws {
        let args = try Arguments(
            ["put", "--port", "9001", "--data-dir=/tmp/x", "--json", "file.bin", "--up-host", "a", "--up-host", "b"],
            options: ["port", "data-dir", "up-host"], flags: ["json"])
        #expect(args.positional == ["put", "file.bin"])
        #expect(try args.integer("port", as: UInt16.self) == 9001)
        #expect(args.value("data-dir") == "/tmp/x")
        #expect(args.all("up-host") == ["a", "b"])
        #expect(args.has("json"))
        #expect(!args.has("verbose"))
    }

    @Test(arguments: [
        (["--nope"], "unknown option --nope"),
        (["--port"], "--port needs a value"),
        (["--json=1"], "--json takes no value"),
    ])
    func rejectsBadArguments(input: [String], message: String) {
        #expect(throws: Arguments.ParseError(description: message)) {
            try Arguments(input, options: ["port"], flags: ["json"])
        }
    }

    @Test func rejectsNonIntegerValues() throws {
        let args = try Arguments(["--port", "80x"], options: ["port"], flags: [])
        #expect(throws: Arguments.ParseError.self) { try args.integer("port", as: UInt16.self) }
    }

    @Test func doubleDashEndsOptions() throws {
        let args = try Arguments(["--", "--port"], options: ["port"], flags: [])
        #expect(args.positional == ["--port"])
    }
}
