import Foundation
import NativeCrypto

/// What a paused upload leaves behind to resume from: a JSON file, written atomically after
/// every acknowledged chunk or part, deleted on success. It holds no credentials (the token's
/// scope, never the token).
struct Checkpoint: Sendable, Equatable, Codable {
    /// The format version; another version is treated as corrupt. 2: blocks and parts carry the
    /// hashes of the bytes sent (the local etag is made of them, not of a second read of the file).
    static let currentVersion = 2

    /// ``currentVersion`` when written.
    var version: Int = Checkpoint.currentVersion
    /// `v1` or `v2`.
    var uploadProtocol: UploadProtocol
    /// The up host the upload started on (resumed uploads go there first).
    var upHost: String
    /// The token's bucket.
    var bucket: String
    /// The token's whole scope (`bucket` or `bucket:key-or-prefix`).
    var scope: String
    /// The key asked for; nil for saveKey / etag naming.
    var key: String?
    /// The file uploaded, as given.
    var filePath: String
    /// The home directory when it was written (`NSHomeDirectory()`; absent in older files): an
    /// app's sandbox container can move (iOS gives it a new path on app updates), so a file under
    /// the old home is the same file under the new one (``samePath(_:home:as:home:)``).
    var home: String? = NSHomeDirectory()
    /// Size, mtime, inode and head/tail fingerprint of the file when the upload began.
    var file: FileFacts
    /// 4 MiB for v1.
    var blockSize: Int64
    /// v1 chunk size.
    var chunkSize: Int
    /// v2 part size.
    var partSize: Int64
    /// v1: per-block ctx, offset, crc32 of the last chunk and ctx expiry, in file order.
    var blocks: [ResumableUpload.Block]?
    /// v2: the upload id.
    var uploadID: String?
    /// v2: when ``uploadID`` expires (unix seconds).
    var uploadExpiresAt: Int64?
    /// v2: acknowledged parts.
    var parts: [MultipartUpload.Part]?

    /// What the current call would write: the values a checkpoint must match to be resumed.
    struct Expectation: Sendable {
        /// The protocol this call uses.
        var uploadProtocol: UploadProtocol
        /// The up hosts this call may use.
        var upHosts: [String]
        /// The current token's scope.
        var scope: String
        /// The key asked for.
        var key: String?
        /// The file path.
        var filePath: String
        /// The home directory now.
        var home: String = NSHomeDirectory()
        /// v1 chunk size.
        var chunkSize: Int
        /// v2 part size.
        var partSize: Int64
    }

    /// Why a checkpoint cannot be resumed; the upload then starts over.
    enum Invalidity: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not JSON, or not a checkpoint of this version.
        case corrupt(String)
        /// The file differs (size, mtime, inode or content); the text says which.
        case fileChanged(String)
        /// Protocol, chunk size, part size, key, scope, up host or path differ; the text says which.
        case settingsChanged(String)
        /// A ctx or the upload id has expired (or would during the upload).
        case expired(String)

        /// A message for people: `checkpoint not used: <why>; starting over`.
        var description: String {
            let why = switch self {
            case .corrupt(let text), .fileChanged(let text), .settingsChanged(let text), .expired(let text): text
            }
            return "checkpoint not used: \(why); starting over"
        }
    }

    /// Whether `recorded` (written when the home directory was `recordedHome`) names the file
    /// `current` names now: the same path, or the same path relative to a home that moved. An iOS
    /// app's data container is `…/Containers/Data/Application/<UUID>`, and the UUID changes on an
    /// app update while the files inside stay (their size, mtime and inode are checked next).
    static func samePath(_ recorded: String, home recordedHome: String?, as current: String, home currentHome: String) -> Bool {
        if recorded == current { return true }
        guard let recordedHome, !recordedHome.isEmpty, recordedHome != currentHome, recorded.hasPrefix(recordedHome + "/")
        else { return false }
        return current == currentHome + recorded.dropFirst(recordedHome.count)
    }

    /// Checks that this checkpoint describes the same upload as `expected` of the same file
    /// content (`facts`), with nothing expiring before `now + margin`; pure.
    ///
    /// - Returns: nil when it can be resumed, else the first reason it cannot.
    func validate(against facts: FileFacts, request expected: Expectation, now: Int64, margin: Int64 = 0) -> Invalidity? {
        if version != Self.currentVersion { return .corrupt("version \(version), expected \(Self.currentVersion)") }
        if !Self.samePath(filePath, home: home, as: expected.filePath, home: expected.home) {
            return .settingsChanged("it is for \(filePath)")
        }
        if let change = file.identityChange(to: facts) { return .fileChanged("the file changed since it was written (\(change))") }
        if file.fingerprint != facts.fingerprint { return .fileChanged("the file changed since it was written (its first or last MiB differ)") }
        if uploadProtocol != expected.uploadProtocol {
            return .settingsChanged("protocol was \(uploadProtocol.rawValue), now \(expected.uploadProtocol.rawValue)")
        }
        if uploadProtocol == .v1, chunkSize != expected.chunkSize {
            return .settingsChanged("chunk size was \(chunkSize), now \(expected.chunkSize)")
        }
        if uploadProtocol == .v2, partSize != expected.partSize {
            return .settingsChanged("part size was \(partSize), now \(expected.partSize)")
        }
        if key != expected.key { return .settingsChanged("key was \(key ?? "(none)"), now \(expected.key ?? "(none)")") }
        if scope != expected.scope { return .settingsChanged("token scope was \(scope), now \(expected.scope)") }
        if !expected.upHosts.contains(upHost) { return .settingsChanged("up host \(upHost) is no longer configured") }
        let limit = now + margin
        switch uploadProtocol {
        case .v2:
            guard uploadID != nil, let expiry = uploadExpiresAt else { return .corrupt("v2 checkpoint without upload id") }
            if expiry <= limit { return .expired("upload id expired at \(expiry)") }
            if let part = parts?.first(where: { $0.digest.flatMap(Hex.decode)?.count != SHA1.byteCount }) {
                return .corrupt("part \(part.number) without the hash of its bytes")
            }
        default:
            let count = Int((file.size + blockSize - 1) / max(1, blockSize))
            guard blockSize == ResumableUpload.blockSize, let blocks, blocks.count == count else {
                return .corrupt("v1 checkpoint without one entry per 4 MiB block")
            }
            if let stale = blocks.firstIndex(where: { $0.context != nil && $0.expiresAt <= limit }) {
                return .expired("ctx of block \(stale) expired at \(blocks[stale].expiresAt)")
            }
            // A complete block needs the SHA-1 of its bytes, a started one their CRC-32.
            let machine = ResumableUpload(fileSize: file.size, chunkSize: chunkSize, concurrency: 1, blocks: blocks)
            if let bad = blocks.indices.first(where: { index in
                let block = blocks[index]
                if machine.isDone(index) { return block.sha1.flatMap(Hex.decode)?.count != SHA1.byteCount }
                return block.context != nil && block.blockCRC32 == nil
            }) {
                return .corrupt("block \(bad) without the hash of its bytes")
            }
        }
        return nil
    }

    /// Decodes checkpoint JSON.
    static func decode(_ data: Data) -> Result<Checkpoint, Invalidity> {
        do {
            return .success(try JSONDecoder().decode(Checkpoint.self, from: data))
        } catch {
            return .failure(.corrupt("not a readable checkpoint (\(error))"))
        }
    }

    /// Encodes checkpoint JSON (sorted keys, so equal checkpoints are equal files).
    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)) ?? Data()
    }
}
