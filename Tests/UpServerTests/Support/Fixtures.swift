import Foundation
import NativeCrypto
import UpServer

/// A fresh directory under the system temp dir; `remove()` deletes it and everything in it.
struct TemporaryDirectory {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("upserver-\(UUID().uuidString)", isDirectory: true)

    func remove() { try? FileManager.default.removeItem(at: url) }

    /// Every regular file below the directory, as paths relative to it.
    func files() -> [String] {
        let base = url.resolvingSymlinksInPath().path
        let all = (try? FileManager.default.subpathsOfDirectory(atPath: base)) ?? []
        var found: [String] = []
        for next in all {
            let attributes = try? FileManager.default.attributesOfItem(atPath: base + "/" + next)
            if attributes?[.type] as? FileAttributeType == .typeRegular {
                found.append(next)
            }
        }
        return found.sorted()
    }
}

/// Deterministic pseudo-random bytes (xorshift), so big payloads need not be kept around.
struct ByteSource {
    private var state: UInt64

    init(seed: UInt64) { state = seed | 1 }

    mutating func next(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        for index in bytes.indices {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            bytes[index] = UInt8(truncatingIfNeeded: state)
        }
        return bytes
    }
}

/// Peak resident memory of this process, from Linux's /proc (VmHWM), resettable through
/// `clear_refs`. `nil` where /proc does not offer it, and the memory check is skipped.
enum PeakMemory {
    /// Resets the high-water mark to the current RSS; false if the kernel refused.
    static func reset() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }

    /// VmHWM in bytes.
    static func highWater() -> Int? { status("VmHWM:") }

    /// VmRSS in bytes.
    static func resident() -> Int? { status("VmRSS:") }

    private static func status(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field) {
            let digits = line.dropFirst(field.count).filter(\.isNumber)
            return Int(digits).map { $0 * 1024 }
        }
        return nil
    }
}
