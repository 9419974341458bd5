// Shared pieces of the targets: input decoding, the property check, fixed keys and clock.
import NativeCrypto
@testable import UpCore

/// The fixed "now" of every target (before the spec vectors' deadline 1900000000).
let now: Int64 = 1_800_000_000
/// The spec vectors' key, the dev key and the documentation example key.
let keys = KeyRing(["test-ak": "test-sk", "dev-access-key": "dev-secret-key", "MY_ACCESS_KEY": "MY_SECRET_KEY"])
let devAccessKey = "dev-access-key"
let devMac = HMACSHA1(key: Array("dev-secret-key".utf8))
let ctxMac = HMACSHA1(key: Array("fuzz-ctx-secret".utf8))

/// A violated property is a crash: libFuzzer saves the input and the script fails.
func require(
    _ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
) {
    if !condition { fatalError("property violated: " + message(), file: file, line: line) }
}

/// Runs a parser, capturing its typed error.
func attempt<T>(_ body: () throws(UpError) -> T) -> Result<T, UpError> {
    do { return .success(try body()) } catch { return .failure(error) }
}

/// Text for a failure message: Swift-escaped, at most 300 characters.
func show(_ text: some StringProtocol) -> String {
    let escaped = String(text).debugDescription
    return escaped.count > 300 ? String(escaped.prefix(300)) + "…" : escaped
}

func show(_ bytes: [UInt8]) -> String { show(String(decoding: bytes, as: UTF8.self)) }

func show(_ error: UpError) -> String { "\(error.code.name): \(error.detail)" }

/// Reads a fuzz input as a few fields; every read succeeds (missing bytes read as zero/empty).
struct FuzzInput {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: [UInt8]) { self.bytes = bytes[...] }

    mutating func byte() -> UInt8 { bytes.popFirst() ?? 0 }

    mutating func uint32() -> UInt32 { (0..<4).reduce(0) { value, _ in value << 8 | UInt32(byte()) } }

    mutating func int64() -> Int64 {
        Int64(bitPattern: (0..<8).reduce(UInt64(0)) { value, _ in value << 8 | UInt64(byte()) })
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        let taken = Array(bytes.prefix(count))
        bytes = bytes.dropFirst(count)
        return taken
    }

    /// The bytes up to the next 0x00 (which is consumed), or all the rest.
    mutating func field() -> [UInt8] {
        guard let end = bytes.firstIndex(of: 0) else { return rest() }
        let taken = Array(bytes[..<end])
        bytes = bytes[(end + 1)...]
        return taken
    }

    /// ``field()`` as text (invalid UTF-8 repaired, as any String the servers hold).
    mutating func text() -> String { String(decoding: field(), as: UTF8.self) }

    mutating func rest() -> [UInt8] {
        let taken = Array(bytes)
        bytes = []
        return taken
    }
}

/// Writes inputs in ``FuzzInput``'s layout (for the seeds).
struct FuzzInputBuilder {
    var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func uint32(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

    mutating func int64(_ value: Int64) {
        let bits = UInt64(bitPattern: value)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: bits >> shift)) }
    }

    mutating func raw(_ value: [UInt8]) { bytes += value }

    mutating func field(_ value: String) { bytes += Array(value.utf8) + [0] }

    mutating func rest(_ value: [UInt8]) { bytes += value }

    mutating func rest(_ value: String) { bytes += Array(value.utf8) }
}

/// Builds one input.
func input(_ build: (inout FuzzInputBuilder) -> Void) -> [UInt8] {
    var builder = FuzzInputBuilder()
    build(&builder)
    return builder.bytes
}

/// `Tests/UpCoreTests/Vectors/vectors.json` (the spec vectors), for the seeds.
struct Vectors {
    let json: JSONValue

    init?(path: String) {
        guard let bytes = readFile(path), let json = try? JSONValue.parse(bytes) else { return nil }
        self.json = json
    }

    /// `json[group][field]` as text.
    func string(_ group: String, _ field: String) -> String? { json[group]?[field]?.stringValue }

    /// The groups whose name starts with `prefix`.
    func groups(prefix: String) -> [JSONValue] {
        guard case .object(let members) = json else { return [] }
        return members.filter { $0.key.hasPrefix(prefix) }.map(\.value)
    }

    /// The path (and query) of one of the `urls` entries.
    func urlPath(_ name: String) -> String? { string("urls", name).map { RequestTarget.of(url: $0) } }
}

/// JSONValue: parse → serialize → parse is the identity, and serializing is stable.
func checkJSONRoundTrip(_ bytes: [UInt8]) {
    guard case .success(let value) = attempt({ () throws(UpError) in try JSONValue.parse(bytes) }) else { return }
    let text = value.serializedBytes()
    switch attempt({ () throws(UpError) in try JSONValue.parse(text) }) {
    case .success(let again):
        require(again == value, "JSON round trip changed the value: \(show(bytes)) -> \(show(text))")
        require(again.serializedBytes() == text, "JSON serialization not stable: \(show(text))")
    case .failure(let error):
        require(false, "serialized JSON does not parse (\(show(error))): \(show(bytes)) -> \(show(text))")
    }
}
