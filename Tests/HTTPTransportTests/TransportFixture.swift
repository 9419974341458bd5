import Basics
import Foundation
import HTTPKit
import HTTPTransport
import Synchronization
import TestSupport

/// Starts an HTTPKit server on 127.0.0.1:0 for one test and always shuts it down. The short
/// grace period keeps tests with deliberately slow handlers fast.
func withServer(
    _ router: Router,
    _ body: (_ port: Int) async throws -> Void
) async throws {
    let configuration = HTTPServer.Configuration(
        threadCount: 2, handlerTimeout: .seconds(10), shutdownGracePeriod: .milliseconds(300)
    )
    let server = HTTPServer(
        configuration: configuration, router: router, logger: Logger(label: "transport-test", sink: LogSink.memory())
    )
    let port = try server.start()
    do {
        try await body(port)
    } catch {
        await server.shutdown()
        throw error
    }
    await server.shutdown()
}

/// Runs `body` and returns the error it threw as a ``TransportError`` (nil if it did not throw).
func transportError(_ body: () async throws -> Void) async -> TransportError? {
    do {
        try await body()
        return nil
    } catch let error as TransportError {
        return error
    } catch {
        return TransportError(.other, "unexpected \(error)")
    }
}

/// Seconds since `start` on the monotonic clock.
func secondsSince(_ start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// A cheap order-sensitive checksum (FNV-1a, 64-bit) so tests need no crypto module.
/// Shared mutable test state that escaping handler closures can capture.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func update(_ change: (inout Value) -> Void) { mutex.withLock { change(&$0) } }
    var value: Value { mutex.withLock { $0 } }
}

/// A file in the temporary directory, removed by `remove()`.
struct TemporaryFile {
    let path: String

    init(bytes: [UInt8]) throws {
        path = NSTemporaryDirectory() + "upgate-transport-\(UUID().uuidString)"
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw TransportError(.other, "cannot create \(path)")
        }
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// CPU time (user + system) this process has used so far, in seconds, from /proc/self/stat.
/// Read from the file rather than through `getrusage` because test targets may not use pointers;
/// the resolution is one clock tick (10 ms), ample for the bounds asserted.
enum ProcessCPUTime {
    static func seconds() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command name start at field 3 (state); utime and stime are 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        return (user + system) / (ticksPerSecond > 0 ? ticksPerSecond : 100)
    }
}
