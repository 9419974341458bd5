import Basics
import Foundation
import NativePostgres
import ObjectStorage
import ServerShell
import Testing
import UpServer

/// `database` and `blobStore` (issue 12 §2): pinned key names, strict parsing, secrets from the
/// environment.
@Suite("UpServerConfiguration stores")
struct UpServerConfigurationStoresTests {
    private static let minimal = #""keys":[{"accessKey":"a","secretKey":"s"}],"buckets":["b"]"#

    private static func load(_ extra: String, environment: [String: String] = [:]) throws -> UpServerConfiguration {
        try UpServerConfiguration.load(json: Data("{\(minimal)\(extra)}".utf8), environment: environment)
    }

    @Test func absentStoresAreSQLiteAndTheDisk() throws {
        let configuration = try Self.load("")
        #expect(configuration.database == nil)
        #expect(try configuration.databaseConnectionString() == nil)
        guard case .disk = configuration.blobStore else { Issue.record("not disk"); return }
    }

    @Test func theDatabaseURLComesFromTheFileOrTheEnvironment() throws {
        let file = try Self.load(#","database":"postgresql://upgate@127.0.0.1:5432/upgate""#)
        #expect(try file.databaseConnectionString()?.description == "upgate@127.0.0.1:5432/upgate")
        let environment = try Self.load(
            #","database":"postgresql://upgate@127.0.0.1:5432/upgate""#,
            environment: ["UPGATE_UP_DATABASE_URL": "postgres://other@10.0.0.2/up"])
        #expect(environment.database == "postgres://other@10.0.0.2/up")
        #expect(try Self.load("", environment: ["UPGATE_UP_DATABASE_URL": "postgresql://u@h/d"]).database == "postgresql://u@h/d")
    }

    @Test(arguments: [
        (#","database":"postgresql://upgate:hunter2@127.0.0.1/upgate""#, "carries a password"),
        (#","database":"mysql://upgate@127.0.0.1/upgate""#, "must be a postgresql:// URL"),
        (#","database":"host=127.0.0.1 dbname=upgate""#, "must be a postgresql:// URL"),
        (#","database":"postgresql://upgate@127.0.0.1/upgate?nosuchoption=1""#, "database:"),
        (#","database":5432"#, "database"),
        (#","blobStore":{"type":"s3","endpoint":"127.0.0.1:8333","bucket":"upgate","accessKeyId":"k","secretAccessKey":"s"}"#, "blobStore.endpoint"),
        (#","blobStore":{"type":"s3","endpoint":"http://127.0.0.1:8333","bucket":"Up_Gate","accessKeyId":"k","secretAccessKey":"s"}"#, "blobStore.bucket"),
        (#","blobStore":{"type":"s3","endpoint":"http://127.0.0.1:8333","bucket":"upgate"}"#, "UPGATE_S3_ACCESS_KEY_ID"),
        (#","blobStore":{"type":"s3","endpoint":"http://127.0.0.1:8333","bucket":"upgate","accessKeyId":"k","secretAccessKey":"s","regoin":"x"}"#, #"did you mean "blobStore.region""#),
        (#","blobStore":{"type":"gcs"}"#, "blobStore.type"),
        (#","blobStore":{"type":"s3","endpoint":"http://127.0.0.1:8333","bucket":"upgate","accessKeyId":"k","secretAccessKey":"s","payloadIntegrity":"md5"}"#, "blobStore.payloadIntegrity"),
    ])
    func mistakesStopTheServerWithOneLine(extra: String, fragment: String) {
        do {
            _ = try Self.load(extra)
            Issue.record("accepted \(extra)")
        } catch {
            #expect("\(error)".contains(fragment), "\(error)")
            #expect(!"\(error)".contains("hunter2"))
        }
    }

    @Test func theS3KeyPairMayComeFromTheEnvironment() throws {
        let store = #","blobStore":{"type":"s3","endpoint":"http://127.0.0.1:8333","region":"eu-west-1","bucket":"upgate"}"#
        let configuration = try Self.load(
            store, environment: ["UPGATE_S3_ACCESS_KEY_ID": "env-id", "UPGATE_S3_SECRET_ACCESS_KEY": "env-secret"])
        guard case .s3(let settings) = configuration.blobStore else { Issue.record("not s3"); return }
        #expect(settings.endpoint == "http://127.0.0.1:8333" && settings.region == "eu-west-1" && settings.bucket == "upgate")
        #expect(settings.credentials.accessKeyId == "env-id" && settings.credentials.secretAccessKey == "env-secret")
        #expect(settings.payloadIntegrity == nil)
    }

    @Test func payloadIntegrityIsReadWhenSet() throws {
        let store = #","blobStore":{"type":"s3","endpoint":"http://127.0.0.1:8333","bucket":"upgate","accessKeyId":"k","secretAccessKey":"s","payloadIntegrity":"crc32"}"#
        guard case .s3(let settings) = try Self.load(store).blobStore else { Issue.record("not s3"); return }
        #expect(settings.payloadIntegrity == .crc32)
    }
}
