import Basics
import ServerShell
import Testing

/// The strict reading of configuration files: where a syntax error is, which key is unknown and
/// what it probably meant, what a value should have been.
@Suite("ConfigurationFile and ConfigurationObject")
struct ConfigurationFileTests {
    static func parse(_ text: String) throws(ConfigurationError) -> ConfigurationObject {
        try ConfigurationFile.parse(Array(text.utf8), source: "f.json")
    }

    static func message(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test(arguments: [
        ("{\"a\": 1,}", "invalid JSON in f.json at line 1, column 8: trailing comma"),
        ("{\n  \"a\": [1, 2,\n  ]\n}", "invalid JSON in f.json at line 2, column 13: trailing comma"),
        ("{\n  \"a\" 1\n}", "invalid JSON in f.json at line 2, column 7: expected ':'"),
        ("{\"a\": \"é\", \"b\": tru}", "invalid JSON in f.json at line 1, column 17: bad literal"),
        ("{\"a\": 1", "invalid JSON in f.json at line 1, column 8: unexpected end of file (unterminated object)"),
        ("[1, 2]", "f.json must hold one JSON object ({ … }), not an array"),
    ])
    func syntaxErrorsNameLineAndColumn(text: String, expected: String) {
        #expect(Self.message { _ = try Self.parse(text) } == expected)
    }

    @Test func unknownKeysAreRefusedWithTheClosestKnownOne() throws {
        let file = try Self.parse(#"{"prot": 1, "_comment": "notes are fine", "host": "h"}"#)
        _ = try file.integer("port")
        _ = try file.string("host")
        #expect(Self.message { try file.finish() } == #"unknown key "prot" in f.json (did you mean "port"?)"#)
        let far = try Self.parse(#"{"zzzzzz": 1}"#)
        _ = try far.integer("port")
        #expect(Self.message { try far.finish() } == #"unknown key "zzzzzz" in f.json"#)
    }

    @Test func nestedObjectsAndArraysAreCheckedByTheTopLevelFinish() throws {
        let file = try Self.parse(#"{"clients": [{"id": "a"}, {"id": "b", "keyprefix": "x/"}], "rate": {"burst": 1}}"#)
        for client in try file.objects("clients") ?? [] {
            _ = try client.string("id")
            _ = try client.string("keyPrefix")
        }
        _ = try file.object("rate")?.number("burst")
        #expect(Self.message { try file.finish() }
            == #"unknown key "clients[1].keyprefix" in f.json (did you mean "clients[1].keyPrefix"?)"#)
    }

    @Test func valuesOfTheWrongTypeSayWhatWasExpected() throws {
        let file = try Self.parse(#"{"port": 99999, "name": 5, "list": ["a", 2], "flag": "yes", "map": {"k": 1}, "gone": null}"#)
        #expect(Self.message { _ = try file.integer("port", as: UInt16.self) }
            == #""port" in f.json must be an integer 0…65535, got 99999"#)
        #expect(Self.message { _ = try file.string("name") } == #""name" in f.json must be a string, got 5"#)
        #expect(Self.message { _ = try file.strings("list") } == #""list[1]" in f.json must be a string, got 2"#)
        #expect(Self.message { _ = try file.bool("flag") } == #""flag" in f.json must be true or false, got "yes""#)
        #expect(Self.message { _ = try file.stringMap("map") } == #""map.k" in f.json must be a string, got 1"#)
        #expect(try file.string("gone") == nil, "null is absent")
        #expect(Self.message { _ = try file.requiredString("id") } == #""id" is missing in f.json"#)
    }

    @Test func choicesListTheAllowedValues() throws {
        enum Body: String, CaseIterable { case form, json }
        let file = try Self.parse(#"{"type": "xml", "good": "json"}"#)
        #expect(try file.choice("good", as: Body.self) == .json)
        #expect(Self.message { _ = try file.choice("type", as: Body.self) }
            == #""type" in f.json must be "form" or "json", got "xml""#)
    }

    @Test(arguments: [
        ("prot", ["port", "host"], "port"), ("keyprefix", ["id", "keyPrefix"], "keyPrefix"),
        ("timeoutSecond", ["scheme", "timeoutSeconds"], "timeoutSeconds"), ("buckts", ["buckets", "keys"], "buckets"),
    ])
    func typosFindTheirKey(typo: String, known: [String], expected: String) throws {
        let file = try Self.parse("{\"\(typo)\": 1}")
        for key in known { _ = try file.number(key) }
        #expect(Self.message { try file.finish() }?.hasSuffix("(did you mean \"\(expected)\"?)") == true)
    }
}

@Suite("KeyPairVariables")
struct KeyPairVariablesTests {
    @Test func bothOrNeither() throws {
        #expect(try KeyPairVariables.read([:]) == nil)
        #expect(try KeyPairVariables.read(["UPGATE_ACCESS_KEY": "", "UPGATE_SECRET_KEY": ""]) == nil)
        let pair = try KeyPairVariables.read(["UPGATE_ACCESS_KEY": "ak", "UPGATE_SECRET_KEY": "sk"])
        #expect(pair?.accessKey == "ak" && pair?.secretKey == "sk")
        #expect(throws: ConfigurationError("UPGATE_ACCESS_KEY is set but UPGATE_SECRET_KEY is not: set both, or neither")) {
            try KeyPairVariables.read(["UPGATE_ACCESS_KEY": "ak"])
        }
        #expect(throws: ConfigurationError("UPGATE_SECRET_KEY is set but UPGATE_ACCESS_KEY is not: set both, or neither")) {
            try KeyPairVariables.read(["UPGATE_SECRET_KEY": "sk", "UPGATE_ACCESS_KEY": ""])
        }
    }
}
