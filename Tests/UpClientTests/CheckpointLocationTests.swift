import Foundation
import Testing
@testable import UpClient

/// Where checkpoints go by default, and that a checkpoint survives the app container moving.
@Suite struct CheckpointLocationTests {
    @Test func linuxDefaultIsXDGStateThenHome() {
        #expect(CheckpointLocation.stateDirectory(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]) == "/s/upgate")
        #expect(CheckpointLocation.stateDirectory(environment: ["XDG_STATE_HOME": "rel", "HOME": "/h"]) == "/h/.local/state/upgate")
        #expect(CheckpointLocation.stateDirectory(environment: ["HOME": "/h"]) == "/h/.local/state/upgate")
        #if os(Linux)
        #expect(CheckpointLocation.defaultDirectory(environment: ["HOME": "/h"]) == "/h/.local/state/upgate")
        #endif
    }

    /// The Apple default, evaluated here through Foundation's own mapping of the directory: an
    /// absolute per-user path ending in upgate/checkpoints, never /tmp or the working directory.
    @Test func applicationSupportDefaultIsAbsoluteAndPerUser() {
        let directory = CheckpointLocation.applicationSupportDirectory()
        #expect(directory.hasPrefix("/"))
        #expect(directory.hasSuffix("/upgate/checkpoints"))
        #expect(!directory.hasPrefix("/tmp") && !directory.hasPrefix(FileManager.default.currentDirectoryPath + "/upgate"))
        let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first?.path
        #expect(base.map { directory.hasPrefix($0) } == true)
    }

    /// up-cli's names, unchanged since it kept them itself: SHA-1 (Python's hashlib) of the
    /// NUL-separated parts.
    @Test func namesAreTheSHA1OfFileKeyAndTarget() {
        #expect(CheckpointLocation.name(file: "/home/u/big.bin", key: "demo/big.bin", target: "http://127.0.0.1:8080")
            == "9e4bfb1697919d0e9d04695cbc682d5defc31281")
        #expect(CheckpointLocation.name(file: "/home/u/big.bin", key: nil, target: "http://127.0.0.1:8080")
            == "731e94f663885fc1e141e0f08d9cad21173be490")
        #expect(CheckpointLocation.defaultPath(
            file: "/home/u/big.bin", key: nil, target: "http://127.0.0.1:8080", environment: ["XDG_STATE_HOME": "/s"])
            == (CheckpointLocation.defaultDirectory(environment: ["XDG_STATE_HOME": "/s"]) + "/731e94f663885fc1e141e0f08d9cad21173be490.json"))
    }

    static let old = "/var/mobile/Containers/Data/Application/1111-OLD"
    static let new = "/var/mobile/Containers/Data/Application/2222-NEW"

    @Test func aFileUnderAMovedHomeIsTheSameFile() {
        #expect(Checkpoint.samePath(Self.old + "/Documents/a.bin", home: Self.old, as: Self.new + "/Documents/a.bin", home: Self.new))
        #expect(Checkpoint.samePath("/data/a.bin", home: Self.old, as: "/data/a.bin", home: Self.new))
    }

    @Test func anotherFileOrAFileOutsideTheHomeIsNot() {
        #expect(!Checkpoint.samePath(Self.old + "/Documents/a.bin", home: Self.old, as: Self.new + "/Documents/b.bin", home: Self.new))
        #expect(!Checkpoint.samePath(Self.old + "/Documents/a.bin", home: nil, as: Self.new + "/Documents/a.bin", home: Self.new))
        #expect(!Checkpoint.samePath("/elsewhere/a.bin", home: Self.old, as: Self.new + "/elsewhere/a.bin", home: Self.new))
        // A prefix that is not a whole path component does not count.
        #expect(!Checkpoint.samePath(Self.old + "X/a.bin", home: Self.old, as: Self.new + "X/a.bin", home: Self.new))
    }

    /// The whole check: a checkpoint written in the old container validates in the new one.
    @Test func aCheckpointStaysValidWhenTheContainerMoves() {
        var written = CheckpointTests.base
        written.filePath = Self.old + "/Documents/a.bin"
        written.home = Self.old
        var expected = CheckpointTests.expected
        expected.filePath = Self.new + "/Documents/a.bin"
        expected.home = Self.new
        #expect(written.validate(against: CheckpointTests.facts, request: expected, now: 500) == nil)
        expected.filePath = Self.new + "/Documents/other.bin"
        #expect(written.validate(against: CheckpointTests.facts, request: expected, now: 500) != nil)
    }

    /// Checkpoints written before `home` existed still decode (and compare by path alone).
    @Test func aCheckpointWithoutHomeStillDecodes() throws {
        var written = CheckpointTests.base
        written.home = nil
        let data = written.encoded()
        #expect(!String(decoding: data, as: UTF8.self).contains("\"home\""))
        let decoded = try Checkpoint.decode(data).get()
        #expect(decoded.home == nil)
        #expect(decoded.validate(against: CheckpointTests.facts, request: CheckpointTests.expected, now: 500) == nil)
    }
}
