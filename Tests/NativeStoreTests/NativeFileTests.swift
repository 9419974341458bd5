import Foundation
import NativeStore
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
