import Foundation
import HTTPTransport
import NativeCrypto
import Synchronization
import Testing
import UpClient
import UpCore

/// UpClient as an Apple-platform app runs it: over ``URLSessionTransport`` (FoundationNetworking
/// here), with a token from biz-server, against an in-process up-server. What an app relies on:
/// the object's hash is the etag of the bytes (UpCore's `Etag`, checked against the Qiniu SDK's
/// vectors), biz-server records the upload once, and the iOS SDKs' `cancel:NO` / `cancel:YES`
/// (``UploadControl/cancel(removingCheckpoint:)``) pause with the checkpoint kept and abort with
/// nothing left, locally or on the server.
@Suite("AppClientEndToEnd", .serialized)
struct AppClientEndToEndTests {
    typealias Chain = ClientEndToEndTests.Chain

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    @Test(arguments: [(UploadProtocol.automatic, 3_000), (.v1, 9 << 20 | 77), (.v2, 9 << 20 | 77)])
    func uploadsOverURLSession(_ choice: UploadProtocol, size: Int) async throws {
        let chain = try await Chain()
        do {
            let path = try chain.file("app-\(choice).bin", size: size)
            let key = "demo/app-\(choice)"
            // 4 MiB parts: then a v2 object's hash is the etag of its bytes (§7.2).
            let client = ClientEndToEndTests.client(chain, choice, chunk: 1 << 20, part: 4 << 20, transport: URLSessionTransport())
            let sent = Mutex<Int64>(0)
            let result = try await client.upload(
                UploadRequest(filePath: path, key: key, token: chain.token,
                              checkpointPath: chain.directory.appending(path: "app.ckpt").path)
            ) { progress in sent.withLock { $0 = max($0, progress.bytesSent) } }
            #expect(result.key == key)
            #expect(result.hash == Etag.of(try Self.bytes(path)))
            #expect(sent.withLock { $0 } == Int64(size))
            #expect(try await chain.records(key: key).count == 1)
        } catch {
            await chain.stop()
            throw error
        }
        await chain.stop()
    }

    @Test(arguments: [UploadProtocol.v1, .v2])
    func cancelWithoutRemovingTheCheckpointPausesAndTheSameRequestResumes(_ choice: UploadProtocol) async throws {
        let chain = try await Chain()
        do {
            let size = 12 << 20
            let path = try chain.file("pause.bin", size: size)
            let checkpoint = chain.directory.appending(path: "app-checkpoints/pause.json").path
            let counting = ClientEndToEndTests.CountingTransport(URLSessionTransport(), delay: .milliseconds(20))
            let client = ClientEndToEndTests.client(chain, choice, chunk: 512 << 10, part: 1 << 20, transport: counting)
            let request = UploadRequest(filePath: path, key: "demo/app-pause-\(choice)", token: chain.token, checkpointPath: checkpoint)
            let control = UploadControl()
            let first = await Result { () async throws(UploadError) -> UploadResult in
                try await client.upload(request, control: control) { progress in
                    if progress.bytesSent >= Int64(size / 2) { control.cancel(removingCheckpoint: false) }
                }
            }
            guard case .failure(let error) = first else { Issue.record("not paused"); await chain.stop(); return }
            #expect(error.kind == .paused)
            #expect(FileManager.default.fileExists(atPath: checkpoint))
            let firstRun = counting.stats.withLock { $0.bytes }
            #expect(firstRun < Int64(size))
            let result = try await client.upload(request, control: control)
            #expect(result.resumed)
            // 1 MiB v2 parts make a part-digest hash, not the 4 MiB-block etag.
            if choice == .v1 { #expect(result.hash == Etag.of(try Self.bytes(path))) }
            #expect(!FileManager.default.fileExists(atPath: checkpoint))
            // Resumed, not restarted: the second run sent far less than the whole file again.
            let secondRun = counting.stats.withLock { $0.bytes } - firstRun
            #expect(secondRun < Int64(size) - (2 << 20), "second run sent \(secondRun) of \(size) bytes")
            #expect(try await chain.records(key: "demo/app-pause-\(choice)").count == 1)
        } catch {
            await chain.stop()
            throw error
        }
        await chain.stop()
    }

    @Test func cancelRemovingTheCheckpointAbortsLocallyAndOnTheServer() async throws {
        let chain = try await Chain()
        do {
            let path = try chain.file("abort.bin", size: 12 << 20)
            let checkpoint = chain.directory.appending(path: "abort.json").path
            let key = "demo/app-abort"
            let client = ClientEndToEndTests.client(
                chain, .v2, part: 1 << 20,
                transport: ClientEndToEndTests.CountingTransport(URLSessionTransport(), delay: .milliseconds(20)))
            let control = UploadControl()
            let uploadID = Mutex<String?>(nil)
            let outcome = await Result { () async throws(UploadError) -> UploadResult in
                try await client.upload(UploadRequest(filePath: path, key: key, token: chain.token, checkpointPath: checkpoint),
                                        control: control) { progress in
                    guard progress.bytesSent >= 3 << 20, uploadID.withLock({ $0 }) == nil,
                        let data = FileManager.default.contents(atPath: checkpoint),
                        let id = try? JSONValue.parse([UInt8](data))["uploadID"]?.stringValue
                    else { return }
                    uploadID.withLock { $0 = id }
                    control.cancel(removingCheckpoint: true)
                }
            }
            guard case .failure(let error) = outcome else { Issue.record("not aborted"); await chain.stop(); return }
            #expect(error.kind == .aborted)
            #expect(!FileManager.default.fileExists(atPath: checkpoint))
            #expect(try await chain.records(key: key).isEmpty)
            // The server kept nothing: listing the upload's parts is 612 (no such upload).
            let id = try #require(uploadID.withLock { $0 })
            let policy = PutPolicy(scope: "demo:" + key, deadline: Int64(Date().timeIntervalSince1970) + 600)
            let token = UpToken.sign(policy, accessKey: "dev-access-key", mac: HMACSHA1(key: Array("dev-secret-key".utf8)))
            let list = try await URLSessionTransport().send(TransportRequest(
                method: "GET", url: chain.upURL + MultipartPath(bucket: "demo", key: key, resource: .upload(id: id)).path,
                headers: [("Authorization", "UpToken " + token)]))
            #expect(list.status == 612, "\(list.status) \(list.text)")
        } catch {
            await chain.stop()
            throw error
        }
        await chain.stop()
    }
}
