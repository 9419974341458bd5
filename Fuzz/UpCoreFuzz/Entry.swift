// libFuzzer entry points. One binary holds every target; UPCORE_FUZZ_TARGET picks the one a
// process runs (scripts/fuzz/libfuzzer starts one process per target). With
// UPCORE_FUZZ_WRITE_SEEDS=<dir> the binary writes that target's seed inputs into <dir> and exits.
import Glibc

/// One fuzz target: a name, the property checks run on every input, and its seed inputs.
struct Target: Sendable {
    let name: String
    let run: @Sendable ([UInt8]) -> Void
    let seeds: @Sendable (Vectors) -> [[UInt8]]
}

let targets: [Target] = [
    Target(name: "policy", run: PolicyTarget.run, seeds: PolicyTarget.seeds),
    Target(name: "paths", run: PathsTarget.run, seeds: PathsTarget.seeds),
    Target(name: "complete", run: CompleteTarget.run, seeds: CompleteTarget.seeds),
    Target(name: "multipart", run: MultipartTarget.run, seeds: MultipartTarget.seeds),
    Target(name: "ctx", run: ContextTarget.run, seeds: ContextTarget.seeds),
    Target(name: "variables", run: VariablesTarget.run, seeds: VariablesTarget.seeds),
    Target(name: "form", run: FormTarget.run, seeds: FormTarget.seeds),
    Target(name: "callback", run: CallbackTarget.run, seeds: CallbackTarget.seeds),
]

/// Set once by `LLVMFuzzerInitialize`, before any input runs; read-only afterwards.
nonisolated(unsafe) var selectedTarget: Target?

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutableRawPointer?, _ argv: UnsafeMutableRawPointer?) -> CInt {
    let name = environment("UPCORE_FUZZ_TARGET") ?? ""
    guard let target = targets.first(where: { $0.name == name }) else {
        printError("UPCORE_FUZZ_TARGET must be one of: " + targets.map(\.name).joined(separator: " "))
        exit(2)
    }
    if let directory = environment("UPCORE_FUZZ_WRITE_SEEDS") {
        let path = environment("UPCORE_FUZZ_VECTORS") ?? "Tests/UpCoreTests/Vectors/vectors.json"
        guard let vectors = Vectors(path: path) else {
            printError("cannot read the spec vectors at \(path)")
            exit(2)
        }
        mkdir(directory, 0o755)
        for (index, seed) in target.seeds(vectors).enumerated() {
            let file = directory + "/seed-" + String(index)
            guard writeFile(file, seed) else {
                printError("cannot write \(file)")
                exit(2)
            }
        }
        exit(0)
    }
    selectedTarget = target
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 || data == nil ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    selectedTarget?.run(bytes)
    return 0
}

func environment(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    return String(cString: value)
}

func printError(_ text: String) {
    print(text)
}

func readFile(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var contents: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count <= 0 { break }
        contents += buffer[0..<count]
    }
    return contents
}

func writeFile(_ path: String, _ bytes: [UInt8]) -> Bool {
    guard let file = fopen(path, "wb") else { return false }
    defer { fclose(file) }
    return bytes.isEmpty || fwrite(bytes, 1, bytes.count, file) == bytes.count
}
