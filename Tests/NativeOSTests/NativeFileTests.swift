import Foundation
import NativeOS
import Testing

@Suite struct NativeFileTests {
    /// `/dev/full` answers every write with ENOSPC: the full-disk error the up-server turns into
    /// `503 insufficient storage` (issue 5, disk-full suite).
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func aWriteToAFullDeviceIsNoSpace() throws {
        let file = try NativeFile(path: "/dev/full")
        var caught: NativeFileError?
        do {
            try file.write([1, 2, 3], at: 0)
        } catch {
            caught = error
        }
        #expect(caught?.operation == "pwrite")
        #expect(caught?.isNoSpace == true)
        #expect(caught?.isNotFound == false)
    }

    @Test func aMissingFileIsNotFoundNotNoSpace() {
        var caught: NativeFileError?
        do {
            _ = try NativeFile(path: "/nonexistent-\(UUID().uuidString)")
        } catch {
            caught = error
        }
        #expect(caught?.isNotFound == true)
        #expect(caught?.isNoSpace == false)
    }
}

@Suite struct NativeFileContentsTests {
    @Test func contentsAndDirectoriesFailWithTheCallThePathAndTheReason() throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "nativefile-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let nested = directory.appending(path: "a/b/c").path
        try NativeFile.createDirectories(atPath: nested)
        try NativeFile.createDirectories(atPath: nested)  // already there: fine
        #expect(FileManager.default.fileExists(atPath: nested))
        let file = directory.appending(path: "a/x.txt").path
        try Data("hello".utf8).write(to: URL(fileURLWithPath: file))
        #expect(try NativeFile.contents(atPath: file) == Array("hello".utf8))

        var missing: NativeFileError?
        do { _ = try NativeFile.contents(atPath: directory.appending(path: "none").path) } catch { missing = error }
        #expect(missing?.isNotFound == true)
        #expect(missing?.reason == "no such file or directory")
        var notDirectory: NativeFileError?
        do { try NativeFile.createDirectories(atPath: file + "/sub") } catch { notDirectory = error }
        #expect(notDirectory?.operation == "mkdir")
        #expect(notDirectory?.reason == "not a directory")
    }
}
