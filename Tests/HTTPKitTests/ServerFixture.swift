import Synchronization
import Basics
import HTTPKit
import TestSupport

/// Starts a server on 127.0.0.1:0 for one test and always shuts it down.
func withServer(
    _ router: Router,
    configuration: HTTPServer.Configuration = .init(threadCount: 2, handlerTimeout: .seconds(5), shutdownGracePeriod: .seconds(2)),
    observer: HTTPServer.Observer? = nil,
    _ body: (_ port: Int, _ server: HTTPServer, _ logs: LogSink) async throws -> Void
) async throws {
    let logs = LogSink.memory()
    let server = HTTPServer(
        configuration: configuration, router: router, logger: Logger(label: "http-test", sink: logs), observer: observer
    )
    let port = try server.start()
    do {
        try await body(port, server, logs)
    } catch {
        await server.shutdown()
        throw error
    }
    await server.shutdown()
}

/// One request on a fresh connection, off the cooperative pool.
func fetch(
    _ port: Int, _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [],
    chunked: Bool = false
) async throws -> TestHTTPResponse {
    try await BlockingIO.run {
        try TestHTTPClient.request(port: port, method, target, headers: headers, body: body, chunked: chunked)
    }
}

/// A cheap order-sensitive checksum (FNV-1a, 64-bit) so tests need no crypto module.
/// Shared mutable test state that escaping handler closures can capture.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func update(_ change: (inout Value) -> Void) { mutex.withLock { change(&$0) } }
    var value: Value { mutex.withLock { $0 } }
}
