import Foundation

/// A unique database path in the temporary directory; `remove()` deletes it with its WAL files.
struct TemporaryDatabase {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("nativestore-\(UUID().uuidString).sqlite").path
    }

    func remove() {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }
}
