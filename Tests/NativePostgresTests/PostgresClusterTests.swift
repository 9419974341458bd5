import Foundation
import NativePostgres
import TestSupport
import Testing

/// The test cluster itself (TestSupport has no test target of its own): what it promises is
/// that nothing is left behind.
@Suite struct PostgresClusterTests {
    @Test func aStoppedClusterLeavesNoServerAndNoDirectory() async throws {
        let cluster = try await PostgresCluster.start()
        let database = try PostgresConnectionString(try await cluster.createDatabase("cluster"))
        let pid = try String(contentsOf: cluster.directory.appending(path: "data/postmaster.pid"), encoding: .utf8)
            .split(separator: "\n").first.map(String.init)
        #expect(try PostgresConnection(database).query("SELECT current_user").first?.decode(0, as: String.self) == "upgate")
        await cluster.stop()
        #expect(!FileManager.default.fileExists(atPath: cluster.directory.path))
        #expect(!isAlive(try #require(pid)))
        let error = #expect(throws: PostgresError.self) { try PostgresConnection(database) }
        #expect(error?.code == .connection)
        #expect(error?.message.contains("\n") == false)
    }

    /// Whether process `pid` runs: a zombie (dead, not yet reaped by whoever inherited the
    /// daemonized postmaster) does not.
    private func isAlive(_ pid: String) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(after: end)...].split(separator: " ").first
        return state != "Z" && state != "X"
    }
}
