#if os(Linux)
import Foundation
import Glibc
import NativeOS
import Testing

/// `NativeFile(directWrites: true)`: the aligned middle of a large write bypasses the page cache,
/// and every byte still lands where it was written, whatever the offsets.
@Suite struct DirectWriteTests {
    let directory = FileManager.default.temporaryDirectory.appending(path: "directwrite-\(UUID().uuidString)")

    init() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    private func cleanUp() { try? FileManager.default.removeItem(at: directory) }

    private static func pattern(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    /// Unaligned heads and tails, a small write between large ones, a write that ends on a block
    /// boundary, and a cut back followed by a rewrite (the retry of an unacknowledged chunk):
    /// the file reads back exactly as the writes say.
    @Test func everyByteLandsAtItsOffsetWhateverTheAlignment() throws {
        defer { cleanUp() }
        let path = directory.appending(path: "blob").path
        let file = try NativeFile(path: path, create: true, directWrites: true)
        var expected: [UInt8] = []
        func write(_ count: Int, seed: UInt8) throws {
            let bytes = Self.pattern(count, seed: seed)
            try file.write(bytes, at: Int64(expected.count))
            expected += bytes
        }
        try write(100, seed: 1)
        try write(300 << 10 + 17, seed: 2)
        try write(5, seed: 3)
        try write(64 << 10, seed: 4)
        try write(4096 - (expected.count % 4096), seed: 5)  // ends on a block boundary
        try write(1 << 20, seed: 6)  // aligned start, four buffers' worth
        let cut = expected.count - 70_000
        try file.truncate(to: Int64(cut))
        expected.removeLast(expected.count - cut)
        try write(200 << 10 + 3, seed: 7)
        #expect(try file.status().size == Int64(expected.count))
        let read = try NativeFile.contents(atPath: path)
        #expect(read.count == expected.count)
        #expect(read.elementsEqual(expected), "first difference at \(read.indices.first { $0 < expected.count && read[$0] != expected[$0] } ?? -1)")
    }

    /// The page cache itself is the witness (`mincore`): 1 MiB written directly leaves at most
    /// the unaligned edge pages cached, while the same write through the cache leaves them all.
    @Test func largeWritesLeaveThePageCacheAlone() throws {
        defer { cleanUp() }
        let size = 1 << 20
        let direct = directory.appending(path: "direct").path
        let cached = directory.appending(path: "cached").path
        try NativeFile(path: direct, create: true, directWrites: true).write(Self.pattern(size, seed: 9), at: 0)
        try NativeFile(path: cached, create: true, directWrites: false).write(Self.pattern(size, seed: 9), at: 0)
        let pages = size / 4096
        #expect(try Self.residentPages(cached, size: size) == pages, "the check sees cached pages")
        guard Self.acceptsDirectIO(directory.path) else { return }  // e.g. an old tmpfs: nothing to see
        #expect(try Self.residentPages(direct, size: size) <= 2)
    }

    /// The aligned buffers follow the writes in flight, not the files open: up-server keeps up
    /// to 128 blobs open, and a buffer per file (256 KiB) would hold 32 MiB. 64 open files each
    /// written 1 MiB directly must not grow resident memory by anything like 64 buffers (16 MiB).
    @Test func openFilesDoNotEachHoldABuffer() throws {
        defer { cleanUp() }
        guard Self.acceptsDirectIO(directory.path) else { return }
        let bytes = Self.pattern(1 << 20, seed: 3)
        let before = try Self.residentKiB()
        var files: [NativeFile] = []
        for index in 0..<64 {
            let file = try NativeFile(path: directory.appending(path: "f\(index)").path, create: true, directWrites: true)
            try file.write(bytes, at: 0)
            files.append(file)
        }
        let grown = try Self.residentKiB() - before
        #expect(grown < 8 << 10, "resident memory grew by \(grown) KiB with \(files.count) files open")
    }

    /// VmRSS of this process, in KiB.
    private static func residentKiB() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// Pages of `path` in the page cache, by `mincore` over a read-only mapping.
    private static func residentPages(_ path: String, size: Int) throws -> Int {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw POSIXError(.ENOENT) }
        defer { close(descriptor) }
        guard let mapped = mmap(nil, size, PROT_READ, MAP_SHARED, descriptor, 0), mapped != MAP_FAILED else {
            throw POSIXError(.ENOMEM)
        }
        defer { munmap(mapped, size) }
        var vector = [UInt8](repeating: 0, count: (size + 4095) / 4096)
        guard mincore(mapped, size, &vector) == 0 else { throw POSIXError(.EINVAL) }
        return vector.count { $0 & 1 == 1 }
    }

    /// Whether a file in `directory` can be opened with `O_DIRECT` (x86-64's value).
    private static func acceptsDirectIO(_ directory: String) -> Bool {
        let probe = directory + "/probe"
        let descriptor = open(probe, O_WRONLY | O_CREAT | 0o40000, 0o644)
        defer { unlink(probe) }
        guard descriptor >= 0 else { return false }
        close(descriptor)
        return true
    }
}
#endif
