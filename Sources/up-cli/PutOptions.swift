import Basics
import Foundation
import UpClient
import UpCore

/// Where tokens come from, as given on the command line.
enum Target {
    /// A biz-server and its API key.
    case biz(url: String, apiKey: String)
    /// A ready upload token.
    case token(String)
}

/// The options shared by `put` and `abort`, validated.
struct PutOptions {
    /// Option names that take a value.
    static let valueOptions: Set<String> = [
        "key", "biz", "api-key", "token", "up-host", "concurrency", "chunk-size", "part-size", "protocol",
        "checkpoint", "limit-rate", "timeout", "retries",
    ]
    /// Flags.
    static let flagOptions: Set<String> = ["no-checkpoint", "json", "verbose"]

    var file: String
    /// `file` made absolute (the checkpoint is keyed by it and the client reads it).
    var absoluteFile: String
    var key: String?
    var target: Target
    /// `--up-host`, in order; empty when not given.
    var upHosts: [String]
    var concurrency: Int?
    var chunkSize: Int?
    var partSize: Int?
    var protocolChoice: UploadProtocol = .automatic
    /// `--checkpoint`; nil with `--no-checkpoint` or when the default location applies.
    var checkpointPath: String?
    var noCheckpoint = false
    var limitRate: Int64?
    /// `--timeout`: the time allowed for one request.
    var requestTimeout: Duration?
    /// `--retries`: retries per request after the first attempt.
    var maxRetries: Int?
    var json = false
    var verbose = false

    /// Validates `arguments` (the words after the command name). `environment` supplies
    /// `UPGATE_API_KEY`.
    init(_ arguments: Arguments, environment: [String: String], currentDirectory: String) throws(CLIFailure) {
        guard let file = arguments.positional.first else { throw .usage("FILE is missing") }
        guard arguments.positional.count == 1 else {
            throw .usage("unexpected argument '\(arguments.positional[1])'")
        }
        self.file = file
        absoluteFile = Self.absolute(file, in: currentDirectory)
        key = arguments.value("key")

        let biz = arguments.value("biz")
        let token = arguments.value("token")
        switch (biz, token) {
        case (let url?, nil):
            guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
                throw .usage("--biz must be an http:// or https:// URL, got '\(url)'")
            }
            guard let apiKey = arguments.value("api-key") ?? environment["UPGATE_API_KEY"], !apiKey.isEmpty else {
                throw .usage("--biz needs an API key: --api-key K or UPGATE_API_KEY")
            }
            target = .biz(url: String(url.trimmingSuffix("/")), apiKey: apiKey)
        case (nil, let token?):
            guard !token.isEmpty else { throw .usage("--token is empty") }
            guard arguments.value("api-key") == nil else { throw .usage("--api-key goes with --biz, not --token") }
            target = .token(token)
            // A token for one key allows nothing else: that key is the only sensible default.
            if key == nil { key = Self.singleKey(ofToken: token) }
        case (nil, nil): throw .usage("say where the token comes from: --biz URL --api-key K, or --token T")
        case (_?, _?): throw .usage("--biz and --token exclude each other")
        }

        upHosts = arguments.all("up-host").map { String($0.trimmingSuffix("/")) }
        for host in upHosts where !(host.hasPrefix("http://") || host.hasPrefix("https://")) {
            throw .usage("--up-host must be an http:// or https:// URL, got '\(host)'")
        }

        if let text = arguments.value("concurrency") {
            guard let n = Int(text), (1...64).contains(n) else { throw .usage("--concurrency must be 1-64, got '\(text)'") }
            concurrency = n
        }
        chunkSize = try Self.size(arguments, "chunk-size", 1 << 10, 4 << 20, "1K-4M").map { Int($0) }
        partSize = try Self.size(arguments, "part-size", 1 << 20, 1 << 30, "1M-1G").map { Int($0) }
        limitRate = try Self.size(arguments, "limit-rate", 1 << 10, Int64.max, "at least 1K")
        if let text = arguments.value("timeout") {
            guard let seconds = Double(text.trimmingWhitespace()), seconds.isFinite, seconds >= 0.1, seconds <= 86_400 else {
                throw .usage("--timeout must be seconds, 0.1-86400 (e.g. 5, 2.5), got '\(text)'")
            }
            requestTimeout = .milliseconds(Int64((seconds * 1000).rounded()))
        }
        if let text = arguments.value("retries") {
            guard let n = Int(text), (0...100).contains(n) else { throw .usage("--retries must be 0-100, got '\(text)'") }
            maxRetries = n
        }
        if let text = arguments.value("protocol") {
            switch text {
            case "auto", "automatic": protocolChoice = .automatic
            case "form": protocolChoice = .form
            case "v1": protocolChoice = .v1
            case "v2": protocolChoice = .v2
            default: throw .usage("--protocol must be form, v1, v2 or auto, got '\(text)'")
            }
        }
        noCheckpoint = arguments.has("no-checkpoint")
        checkpointPath = arguments.value("checkpoint").map { Self.absolute($0, in: currentDirectory) }
        if noCheckpoint && checkpointPath != nil { throw .usage("--checkpoint and --no-checkpoint exclude each other") }
        json = arguments.has("json")
        verbose = arguments.has("verbose")
    }

    /// The key a token's scope names when it is `bucket:key` without `isPrefixalScope`; nil for a
    /// bucket or prefix scope, or a text that is not an upload token (the server will say so).
    static func singleKey(ofToken token: String) -> String? {
        let fields = token.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 3, let json = URLSafeBase64.decode(fields[2]), let policy = try? PutPolicy(jsonBytes: json),
            !policy.isPrefixal
        else { return nil }
        return policy.scopeKey
    }

    /// The up hosts to use when neither `--up-host` nor biz-server names any.
    static let fallbackUpHost = "http://127.0.0.1:9000"

    /// The up hosts for the client: `--up-host` when given; else, with a biz-server, none, so the
    /// client uses the hosts biz-server hands out with the token; else ``fallbackUpHost``.
    var configuredUpHosts: [String] {
        if !upHosts.isEmpty { return upHosts }
        if case .biz = target { return [] }
        return [Self.fallbackUpHost]
    }

    /// The token source for the client.
    var tokenSource: TokenSource {
        switch target {
        case .biz(let url, let apiKey): .bizServer(url: url, apiKey: apiKey)
        case .token(let token): .fixed(token)
        }
    }

    /// What the checkpoint is keyed by besides file and key: the biz URL, or the up hosts.
    var targetIdentity: String {
        switch target {
        case .biz(let url, _): url
        case .token: (upHosts.isEmpty ? [Self.fallbackUpHost] : upHosts).joined(separator: ",")
        }
    }

    private static func size(
        _ arguments: Arguments, _ name: String, _ low: Int64, _ high: Int64, _ range: String
    ) throws(CLIFailure) -> Int64? {
        guard let text = arguments.value(name) else { return nil }
        guard let bytes = ByteSize.parse(text), bytes >= low, bytes <= high else {
            throw .usage("--\(name) must be a size \(range) (e.g. 512K, 1.5M, 4M), got '\(text)'")
        }
        return bytes
    }

    /// `path` made absolute against `directory`, with `.` and `..` resolved.
    static func absolute(_ path: String, in directory: String) -> String {
        let full = path.hasPrefix("/") ? path : (directory.hasSuffix("/") ? directory : directory + "/") + path
        return URL(fileURLWithPath: full).standardizedFileURL.path
    }
}

extension String {
    /// Without trailing copies of `suffix`.
    func trimmingSuffix(_ suffix: Character) -> Substring {
        var end = endIndex
        while end > startIndex, self[index(before: end)] == suffix { end = index(before: end) }
        return self[..<end]
    }
}
