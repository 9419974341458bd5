import Foundation
import HTTPTransport
import NativeCrypto
import Synchronization
import Testing
import UpClient
import UpCore

/// UpClient against the real up-server and biz-server: a file that changes while it is uploaded
/// (form, v1, v2) is never completed — `fileChanged`, nothing under the key at `/stat` (612), no
/// biz-server record, no checkpoint — and a 579 is `callbackFailed` with the stored object's hash.
@Suite("ClientIntegrityEndToEnd", .serialized)
struct ClientIntegrityEndToEndTests {
    typealias Chain = ClientEndToEndTests.Chain

    /// Changes the file when the `at`-th upload request (not a token request) is sent, then holds
    /// that request for `hold` (long enough for a form POST to be stopped before it goes out).
    final class EditingTransport: HTTPTransport {
        let inner: any HTTPTransport
        let path: String
        let at: Int
        let grow: Bool
        let hold: Duration
        private let count = Counter()

        init(_ inner: any HTTPTransport, path: String, at: Int, grow: Bool, hold: Duration) {
            self.inner = inner
            self.path = path
            self.at = at
            self.grow = grow
            self.hold = hold
        }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            if !request.url.hasSuffix("/v1/uptoken"), count.next() == at {
                UploadClientEdit.apply(path, grow: grow)
                try await Task.sleep(for: hold)
            }
            return try await inner.send(request)
        }
    }

    static let cases: [(UploadProtocol, Bool)] = [(.form, false), (.form, true), (.v1, false), (.v1, true), (.v2, false), (.v2, true)]

    @Test(arguments: cases.indices)
    func aFileChangedMidUploadIsNeverCompleted(_ index: Int) async throws {
        let (choice, grow) = Self.cases[index]
        let chain = try await Chain()
        do {
            let path = try chain.file("changing-\(index).bin", size: choice == .form ? 100_000 : (3 << 20) + 5)
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: path)
            let checkpoint = chain.directory.appending(path: "changing.ckpt").path
            let key = "demo/changing-\(index)"
            // form: its only request; v1 / v2: the second chunk or part (v2: after init).
            let at = choice == .form ? 0 : choice == .v1 ? 1 : 2
            let transport = EditingTransport(try CurlTransport(), path: path, at: at, grow: grow, hold: .milliseconds(600))
            let client = ClientEndToEndTests.client(chain, choice, chunk: 1 << 20, part: 1 << 20, transport: transport)
            let outcome = await Result { () async throws(UploadError) -> UploadResult in
                try await client.upload(UploadRequest(filePath: path, key: key, token: chain.token, checkpointPath: checkpoint))
            }
            guard case .failure(let error) = outcome else {
                Issue.record("the changed file was uploaded")
                await chain.stop()
                return
            }
            #expect(error.kind == .fileChanged, "\(error)")
            #expect(try await UpServerStat.status(upURL: chain.upURL, key: key) == 612)
            #expect(try await chain.records(key: key).isEmpty)
            #expect(!FileManager.default.fileExists(atPath: checkpoint))
        } catch {
            await chain.stop()
            throw error
        }
        await chain.stop()
    }

    @Test(arguments: [UploadProtocol.form, .v1, .v2])
    func aFailedCallbackIsStoredNotFailed(_ choice: UploadProtocol) async throws {
        let chain = try await Chain()
        do {
            let path = try chain.file("callback.bin", size: 6000)
            let key = "demo/callback-\(choice)"
            var policy = PutPolicy(scope: "demo:" + key, deadline: Int64(Date().timeIntervalSince1970) + 3600)
            policy.callbackUrl = "http://127.0.0.1:1/callback"
            policy.callbackBody = "key=$(key)"
            let token = UpToken.sign(policy, accessKey: "dev-access-key", mac: HMACSHA1(key: Array("dev-secret-key".utf8)))
            let client = ClientEndToEndTests.client(chain, choice, transport: try CurlTransport())
            let outcome = await Result { () async throws(UploadError) -> UploadResult in
                try await client.upload(UploadRequest(filePath: path, key: key, token: .fixed(token)))
            }
            guard case .failure(let error) = outcome else {
                Issue.record("a 579 was a success")
                await chain.stop()
                return
            }
            #expect(error.kind == .callbackFailed, "\(error)")
            #expect(error.result?.hash == Etag.of([UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))))
            #expect(try await UpServerStat.status(upURL: chain.upURL, key: key) == 200)
        } catch {
            await chain.stop()
            throw error
        }
        await chain.stop()
    }
}

/// A thread-safe counter from 0.
final class Counter: Sendable {
    private let value = Mutex(0)
    /// The current value, then one more.
    func next() -> Int {
        value.withLock { value in
            defer { value += 1 }
            return value
        }
    }
}

/// Edits used by the client suites: 1000 bytes overwritten in the middle, or appended.
enum UploadClientEdit {
    static func apply(_ path: String, grow: Bool) {
        guard let handle = FileHandle(forWritingAtPath: path) else { return }
        defer { try? handle.close() }
        let size = (try? handle.seekToEnd()) ?? 0
        if !grow { try? handle.seek(toOffset: size / 2 + 10) }
        try? handle.write(contentsOf: Data(repeating: 0xEE, count: 1000))
    }
}
