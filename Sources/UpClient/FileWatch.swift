import Synchronization

/// Notices that the file being uploaded changed after the upload began, so that an edited file
/// is never completed (mkfile / complete / the form POST) and the local etag always describes one
/// version of the file.
///
/// It compares size, modification time and inode with the facts read when the call began (one
/// `stat`, no reading): before the final request (``check()``), and every ``interval`` while the
/// upload runs (``watch(onChange:)``), so an edit stops a long upload promptly rather than at
/// its end. The etag is computed from the bytes as they are sent, so even an edit that slips
/// between two checks cannot make it describe bytes that were not sent.
final class FileWatch: Sendable {
    /// How often the file is looked at during the upload.
    static let interval: Duration = .milliseconds(200)

    /// The file.
    let path: String
    /// What it was when the upload began.
    let facts: FileFacts
    private let seen = Mutex<UploadError?>(nil)

    init(path: String, facts: FileFacts) {
        self.path = path
        self.facts = facts
    }

    /// The first change noticed, if any.
    var change: UploadError? { seen.withLock { $0 } }

    /// Throws ``UploadError/Kind/fileChanged`` when the file is no longer what it was.
    func check() throws(UploadError) {
        if let change { throw change }
        let reason: String?
        do {
            reason = facts.identityChange(to: try FileFacts.stat(path: path))
        } catch {
            reason = "it can no longer be read (\(error.message))"
        }
        guard let reason else { return }
        throw record(UploadError(.fileChanged, "the file changed while uploading: \(reason)"))
    }

    /// Remembers `error` as the change (the first one wins) and returns the one remembered.
    @discardableResult
    func record(_ error: UploadError) -> UploadError {
        seen.withLock { seen in
            if seen == nil { seen = error }
            return seen ?? error
        }
    }

    /// Checks every ``interval`` until cancelled; calls `onChange` once, at the first change.
    func watch(onChange: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        Task.detached { [self] in
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: Self.interval)
                } catch {
                    return
                }
                do throws(UploadError) { try check() } catch {
                    onChange()
                    return
                }
            }
        }
    }
}
