public import Foundation

/// Runs the official Qiniu Python SDK (`qiniu==7.18.0`), our conformance peer, from the venv that
/// `scripts/pyenv` creates under `.build/pyenv` (or the interpreter named by `UPGATE_PYTHON`,
/// which `scripts/test` sets).
public enum PythonSDK {
    /// The repository root (this file is `Sources/TestSupport/PythonSDK.swift`).
    public static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The venv's interpreter, or nil when the venv has not been created.
    public static var interpreter: String? {
        let candidates: [String?] = [
            ProcessInfo.processInfo.environment["UPGATE_PYTHON"],
            repositoryRoot.appending(path: ".build/pyenv/bin/python3").path,
        ]
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Why a script could not be run.
    public struct Missing: Error, CustomStringConvertible {
        /// Explains how to create the venv.
        public var description: String { "the SDK venv is missing: run scripts/pyenv (scripts/test does)" }
    }

    /// Runs the interpreter with `arguments` on its own thread (never blocking the cooperative pool,
    /// which the servers under test need) and returns its exit status and combined output.
    ///
    /// - Throws: ``Missing`` when there is no venv — a conformance test must fail, not skip.
    public static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        guard let interpreter else { throw Missing() }
        return try await BlockingIO.run { try runProcess(interpreter, arguments) }
    }

    /// Runs `executable` to completion; exit status and combined stdout/stderr.
    public static func runProcess(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
