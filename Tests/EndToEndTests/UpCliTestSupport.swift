import BizServer
import Foundation
import HTTPTransport
import NativeCrypto
import UpCore

/// What the up-cli suites need besides ``Chain``'s servers: tokens signed here (not by biz-server),
/// up-server's `/stat` signed as the official SDK's `BucketManager.stat` signs it, biz-server's
/// records, and edits to a file while it is being uploaded.
extension Chain {
    static let accessKey = "dev-access-key"
    static let mac = HMACSHA1(key: Array("dev-secret-key".utf8))

    /// An upload token for `scope`, valid for an hour; with `callbackURL`, a form callback there.
    func token(scope: String, callbackURL: String? = nil) -> String {
        var policy = PutPolicy(scope: scope, deadline: Int64(Date().timeIntervalSince1970) + 3600)
        if let callbackURL {
            policy.callbackUrl = callbackURL
            policy.callbackBody = "key=$(key)&hash=$(etag)"
        }
        return UpToken.sign(policy, accessKey: Self.accessKey, mac: Self.mac)
    }

    /// The status of up-server's `/stat` for `key` in bucket `demo` (``UpServerStat``).
    func statStatus(_ key: String) async throws -> Int { try await UpServerStat.status(upURL: upURL, key: key) }

    /// biz-server's records of `key`.
    func recordCount(key: String) async throws -> Int {
        try await store.uploads(clientID: "demo", limit: 100, after: nil).count { $0.key == key }
    }

    /// Changes the file at `path` in place: `grow` appends 256 KiB, otherwise 64 KiB in the middle
    /// are overwritten (size kept; the modification time moves).
    static func edit(_ path: String, grow: Bool) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        if grow {
            try handle.write(contentsOf: Data(repeating: 7, count: 256 << 10))
        } else {
            try handle.seek(toOffset: size / 2)
            try handle.write(contentsOf: Data(repeating: 0xAB, count: 64 << 10))
        }
    }

    /// Runs `up-cli` with `arguments` on a pseudo-terminal of `columns` columns (util-linux
    /// `script`), so standard error is a terminal and the progress bar is drawn; returns the exit
    /// status and everything written to the terminal.
    func runOnTerminal(_ arguments: [String], columns: Int, name: String) async throws -> (status: Int32?, output: String) {
        let command = "stty cols \(columns) rows 24; exec " + ([binary] + arguments).map(Self.shellQuoted).joined(separator: " ")
        let run = try CLIProcess(
            binary: "/usr/bin/script", arguments: ["-qfec", command, "/dev/null"],
            stdout: directory.appending(path: name).path, stderr: directory.appending(path: name + ".err").path)
        let status = await run.exitStatus()
        return (status, run.output())
    }

    static func shellQuoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// The progress-bar states drawn on a terminal: the text after each `ESC[2K` (clear line) up to
    /// the next carriage return or newline.
    static func barLines(_ output: String) -> [String] {
        // By scalars: "\r\n" is one Character, which neither "\r" nor "\n" would match.
        output.components(separatedBy: "\u{1B}[2K").dropFirst().map { segment in
            String(String.UnicodeScalarView(segment.unicodeScalars.prefix { $0 != "\r" && $0 != "\n" }))
        }
    }
}

/// up-server's `GET /stat/<EncodedEntryURI>`, signed with the development AK/SK as the official
/// SDK's `BucketManager.stat` signs it (QBox).
enum UpServerStat {
    /// 200 when `key` is stored in bucket `demo`, 612 when not.
    static func status(upURL: String, key: String) async throws -> Int {
        let target = "/stat/" + EncodedEntryURI.encode(bucket: "demo", key: key)
        let authorization = QBoxSignature.sign(
            target: target, body: [], contentType: nil, accessKey: Chain.accessKey, mac: Chain.mac)
        let response = try await CurlTransport().send(
            TransportRequest(method: "GET", url: upURL + target, headers: [("Authorization", authorization)]))
        return response.status
    }
}
