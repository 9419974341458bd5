import Foundation
import TestSupport

/// One of the two server executables with a minimal valid configuration of its own, in a
/// temporary directory that ``remove()`` deletes.
struct ServerFixture: CustomStringConvertible, Sendable {
    /// `biz-server` or `up-server`.
    let name: String
    let directory: URL

    static let both = ["biz-server", "up-server"]

    init(_ name: String) {
        self.name = name
        directory = FileManager.default.temporaryDirectory.appending(path: "shell-\(name)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    var description: String { name }

    /// SHA-256 of `test-api-key`, the API key of the fixture's biz-server client `demo`.
    static let testAPIKeyHash = "4c806362b613f7496abf284146efd31da90e4b16169fe001841ca17290f427c4"

    /// A valid configuration text using test (not development) credentials.
    var validConfiguration: String {
        name == "biz-server"
            ? """
            {
              "port": 0,
              "dataDirectory": "\(directory.path)/data",
              "accessKey": "test-ak",
              "secretKey": "test-sk",
              "clients": [{"id": "demo", "apiKeySHA256": "\(Self.testAPIKeyHash)", "bucket": "demo", "keyPrefix": "demo/"}]
            }
            """
            : """
            {
              "port": 0,
              "dataDirectory": "\(directory.path)/data",
              "keys": [{"accessKey": "test-ak", "secretKey": "test-sk"}],
              "buckets": ["demo"],
              "callback": {"timeoutSeconds": 2}
            }
            """
    }

    /// Writes `text` as the configuration file and returns its path.
    @discardableResult
    func writeConfiguration(_ text: String) throws -> String {
        let path = directory.appending(path: "\(name).json").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The path ``writeConfiguration(_:)`` writes.
    var configurationPath: String { directory.appending(path: "\(name).json").path }

    /// Runs the server to its end with `arguments`.
    func run(_ arguments: [String], environment: [String: String] = [:]) async throws
        -> (status: Int32?, stdout: String, stderr: String)
    {
        try await ServerProcess.run(name, arguments: arguments, environment: environment, directory: directory)
    }

    /// Starts the server with `arguments` (it keeps running).
    func start(_ arguments: [String], environment: [String: String] = [:]) throws -> ServerProcess {
        try ServerProcess(name, arguments: arguments, environment: environment, directory: directory)
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}
