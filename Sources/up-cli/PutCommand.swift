import Basics
import Foundation
import HTTPTransport
import JSONText
import UpClient
import UpCore

/// `up-cli put FILE …`.
struct PutCommand {
    let options: PutOptions
    let environment: [String: String]
    /// The command line as typed, for the resume hint.
    let commandLine: [String]

    func run() async throws(CLIFailure) {
        let size = try FileCheck.regularFileSize(options.absoluteFile)
        let checkpoint = try checkpointPath()
        let mode: ProgressRenderer.Mode =
            options.json || !Console.isTerminal(1) ? .json : (Console.isTerminal(2) ? .bar : .silent)
        let transport = try Self.transport()
        let upHosts = options.configuredUpHosts

        var configuration = UploadClient.Configuration(upHosts: upHosts)
        configuration.protocolChoice = options.protocolChoice
        if let concurrency = options.concurrency { configuration.concurrency = concurrency }
        if let chunkSize = options.chunkSize { configuration.chunkSize = chunkSize }
        if let partSize = options.partSize { configuration.partSize = partSize }
        if let timeout = options.requestTimeout { configuration.requestTimeout = timeout }
        if let retries = options.maxRetries { configuration.maxRetries = retries }
        configuration.maxBytesPerSecond = options.limitRate
        let client = UploadClient(configuration: configuration, transport: transport)
        let request = UploadRequest(
            filePath: options.absoluteFile, key: options.key, token: options.tokenSource, checkpointPath: checkpoint)

        let found = checkpoint.map { FileManager.default.fileExists(atPath: $0) } ?? false
        if options.verbose {
            Console.err("up-cli: \(options.absoluteFile) (\(ByteSize.format(size))) → key \(options.key ?? "<from token>")")
            Console.err("up-cli: up hosts \(upHosts.isEmpty ? "from biz-server" : upHosts.joined(separator: ", ")); protocol \(options.protocolChoice.rawValue), "
                + "concurrency \(configuration.concurrency), chunk \(ByteSize.format(Int64(configuration.chunkSize))), "
                + "part \(ByteSize.format(Int64(configuration.partSize))), "
                + "timeout \(PutCommand.decimal(configuration.requestTimeout.seconds, places: 1)) s, retries \(configuration.maxRetries)"
                + (options.limitRate.map { ", limit \(ByteSize.format($0))/s" } ?? ""))
            Console.err("up-cli: checkpoint \(checkpoint ?? "none")" + (found ? " (found)" : ""))
        }

        let renderer = ProgressRenderer(mode: mode)
        let control = UploadControl()
        let watcher = Interrupts.install {
            control.pause()
            renderer.finish()
            Console.err("up-cli: pausing… (Ctrl-C again to quit at once)")
        }
        defer { watcher.cancel() }

        let started = StartReport(options: options, checkpoint: checkpoint, found: found, mode: mode)
        let result: UploadResult
        do {
            result = try await client.upload(request, control: control, progress: { renderer.update($0) }, onStart: { started.show($0) })
        } catch {
            renderer.finish()
            throw report(error, checkpoint: checkpoint, size: size, mode: mode)
        }
        renderer.finish(completed: result.size, seconds: result.duration.seconds)
        report(result, mode: mode)
    }

    /// `--checkpoint`, else the default location (created), else nil with `--no-checkpoint`.
    private func checkpointPath() throws(CLIFailure) -> String? {
        guard !options.noCheckpoint else { return nil }
        let path = options.checkpointPath ?? CheckpointLocation.defaultPath(
            file: options.absoluteFile, key: options.key, target: options.targetIdentity, environment: environment)
        try CheckpointLocation.prepareDirectory(for: path)
        return path
    }

    /// libcurl (`--limit-rate` is the client's own pacing, ``UploadClient/Configuration/maxBytesPerSecond``).
    static func transport() throws(CLIFailure) -> any HTTPTransport {
        do {
            return try CurlTransport()
        } catch {
            throw CLIFailure(.uploadFailed, "cannot start the HTTP client: \(error)")
        }
    }

    private func report(_ result: UploadResult, mode: ProgressRenderer.Mode) {
        let skipped = max(0, result.size - result.bytesSent)
        let replyJSON: String = (try? JSONValue.parse(result.reply))?.serialized()
            ?? JSONText.quoted(String(decoding: result.reply, as: UTF8.self))
        if mode == .json {
            var line = "{\"event\":\"done\"," + Self.objectFields(result)
            line += ",\"resumed\":\(result.resumed),\"bytesSkipped\":\(skipped)"
            line += ",\"checkpointNote\":" + (result.checkpointNote.map(JSONText.quoted) ?? "null")
            line += ",\"reply\":" + replyJSON + "}"
            Console.out(line)
            return
        }
        printObject(result)
        if result.resumed {
            Console.out("resume: \(ByteSize.format(result.bytesSent)) sent now, \(ByteSize.format(skipped)) already on the server")
        }
        Console.out("reply:  \(replyJSON)")
    }

    /// `"key":…,"hash":…,"size":…,"seconds":…,"bytesSent":…` of a stored object.
    private static func objectFields(_ result: UploadResult) -> String {
        "\"key\":" + (result.key.map(JSONText.quoted) ?? "null") + ",\"hash\":" + JSONText.quoted(result.hash)
            + ",\"size\":\(result.size),\"seconds\":" + decimal(result.duration.seconds, places: 3)
            + ",\"bytesSent\":\(result.bytesSent)"
    }

    /// The key, hash, size and time lines of a stored object.
    private func printObject(_ result: UploadResult) {
        let seconds = result.duration.seconds
        let rate = seconds > 0 && result.bytesSent > 0 ? "  (\(ByteSize.format(Int64(Double(result.bytesSent) / seconds)))/s)" : ""
        Console.out("key:    \(result.key ?? "(none)")")
        Console.out("hash:   \(result.hash)")
        Console.out("size:   \(result.size) bytes (\(ByteSize.format(result.size)))")
        Console.out("time:   \(Self.decimal(seconds, places: 2)) s\(rate)")
    }

    /// Prints the failure (and for a pause, how to resume) and returns the exit status to end with.
    private func report(_ error: UploadError, checkpoint: String?, size: Int64, mode: ProgressRenderer.Mode) -> CLIFailure {
        let code = ExitCode(error)
        switch error.kind {
        case .paused:
            return paused(error, checkpoint: checkpoint, size: size, mode: mode)
        case .callbackFailed:
            // Not a failure of the upload: the object is stored and final.
            if let result = error.result {
                if mode == .json {
                    var line = "{\"event\":\"stored\",\"callbackFailed\":true," + Self.objectFields(result)
                    line += ",\"message\":" + JSONText.quoted("stored; the app's callback failed and will be retried")
                    line += ",\"callbackError\":" + JSONText.quoted(String(decoding: result.reply, as: UTF8.self))
                    line += ",\"requestId\":" + (error.requestID.map(JSONText.quoted) ?? "null") + "}"
                    Console.out(line)
                } else {
                    printObject(result)
                }
            }
            return CLIFailure(code, error.message + (error.requestID.map { " (reqid \($0))" } ?? ""))
        default:
            break
        }
        if mode == .json {
            var line = "{\"event\":\"error\",\"exitCode\":\(code.rawValue),\"message\":" + JSONText.quoted(error.message)
            line += ",\"kind\":" + JSONText.quoted(error.kind.name)
            line += ",\"requestId\":" + (error.requestID.map(JSONText.quoted) ?? "null") + "}"
            Console.out(line)
        }
        if error.kind == .fileChanged {
            return CLIFailure(
                code, "\(error.message)\n  nothing was completed and the checkpoint is removed: upload the file again once it is stable")
        }
        var message = "upload failed: \(error)"
        if let checkpoint, FileManager.default.fileExists(atPath: checkpoint), code != .checkpointOrFile {
            let saved = error.savedBytes.map { " (it holds \(ByteSize.format($0)) of \(ByteSize.format(size)))" } ?? ""
            message += "\n  the checkpoint is kept\(saved): the same command resumes; `up-cli abort` with the same arguments discards it"
        }
        return CLIFailure(code, message)
    }

    /// The pause: what the checkpoint holds and the command that resumes.
    private func paused(_ error: UploadError, checkpoint: String?, size: Int64, mode: ProgressRenderer.Mode) -> CLIFailure {
        let resume = ResumeHint.command(commandLine)
        let kept = checkpoint.map { FileManager.default.fileExists(atPath: $0) } ?? false
        let saved = kept ? error.savedBytes ?? 0 : 0
        if mode == .json {
            var line = "{\"event\":\"paused\",\"checkpoint\":" + (checkpoint.map(JSONText.quoted) ?? "null")
            line += ",\"checkpointKept\":\(kept),\"savedBytes\":\(saved),\"totalBytes\":\(size)"
            line += ",\"resume\":" + JSONText.quoted(resume) + "}"
            Console.out(line)
        }
        var message = kept
            ? "paused — saved \(ByteSize.format(saved)) of \(ByteSize.format(size)); run the same command again to resume:\n  \(resume)"
            : "paused — no checkpoint (--no-checkpoint): the next run starts over:\n  \(resume)"
        for variable in ResumeHint.maskedVariables(commandLine) {
            message += "\n  (with \(variable) set: the value given on the command line is not printed)"
        }
        return CLIFailure(.paused, message)
    }

    /// `value` with `places` decimals, e.g. `3.142`.
    static func decimal(_ value: Double, places: Int) -> String {
        let scale = (0..<places).reduce(1) { product, _ in product * 10 }
        let scaled = Int64((value * Double(scale)).rounded())
        let fraction = String(abs(scaled % Int64(scale)))
        return "\(scaled / Int64(scale))." + String(repeating: "0", count: places - fraction.count) + fraction
    }
}

/// The command to run again after a pause, safe to print: credentials replaced by a variable.
enum ResumeHint {
    /// `commandLine` shell-quoted, with the `--api-key` value replaced by `"$UPGATE_API_KEY"` and a
    /// `--token` value by `"$UPGATE_TOKEN"`.
    static func command(_ commandLine: [String]) -> String {
        var words: [String] = []
        var index = 0
        while index < commandLine.count {
            let word = commandLine[index]
            index += 1
            if let (name, variable) = secret(word) {
                if word.contains("=") {
                    words.append("--\(name)=\"$\(variable)\"")
                } else {
                    words.append(quote(word))
                    if index < commandLine.count {
                        words.append("\"$\(variable)\"")
                        index += 1
                    }
                }
                continue
            }
            words.append(quote(word))
        }
        return words.joined(separator: " ")
    }

    /// The variables ``command(_:)`` put in place of credentials given on the command line.
    static func maskedVariables(_ commandLine: [String]) -> [String] {
        var variables: [String] = []
        for word in commandLine {
            if let (_, variable) = secret(word), !variables.contains(variable) { variables.append(variable) }
        }
        return variables
    }

    private static func secret(_ word: String) -> (String, String)? {
        for (name, variable) in [("api-key", "UPGATE_API_KEY"), ("token", "UPGATE_TOKEN")]
        where word == "--\(name)" || word.hasPrefix("--\(name)=") {
            return (name, variable)
        }
        return nil
    }

    /// `word` quoted for a POSIX shell when it needs it.
    static func quote(_ word: String) -> String {
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy {
            ($0.value < 128) && (CharacterSet.alphanumerics.contains($0) || "-_./:=,@%+".unicodeScalars.contains($0))
        }
        return plain ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// Checks on the local file before anything is sent.
enum FileCheck {
    /// The size of the regular file at `path`; exit status 4 when it is missing, not a regular
    /// file or unreadable.
    static func regularFileSize(_ path: String) throws(CLIFailure) -> Int64 {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw CLIFailure(.checkpointOrFile, "cannot read \(path): no such file or not accessible")
        }
        guard (attributes[.type] as? FileAttributeType) == .typeRegular else {
            throw CLIFailure(.checkpointOrFile, "\(path) is not a regular file")
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw CLIFailure(.checkpointOrFile, "\(path) is not readable")
        }
        return (attributes[.size] as? NSNumber)?.int64Value ?? 0
    }
}
