import Foundation
import UpCore

/// `up-cli etag FILE`: the Qiniu v1 etag, read in 1 MiB pieces (memory stays bounded).
enum EtagCommand {
    static func run(path: String) throws(CLIFailure) -> String {
        _ = try FileCheck.regularFileSize(path)
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        } catch {
            throw CLIFailure(.checkpointOrFile, "cannot open \(path): \(error.localizedDescription)")
        }
        defer { try? handle.close() }
        var hasher = EtagHasher()
        while true {
            let piece: Data?
            do {
                piece = try handle.read(upToCount: 1 << 20)
            } catch {
                throw CLIFailure(.checkpointOrFile, "cannot read \(path): \(error.localizedDescription)")
            }
            guard let piece, !piece.isEmpty else { break }
            hasher.update(piece)
        }
        return hasher.finalize().etag
    }
}
