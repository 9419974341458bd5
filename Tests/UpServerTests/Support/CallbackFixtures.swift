import Outbox
import UpCore
@testable import UpServer

/// An object in `demo` with a callback, stored as the committer stores it.
enum CallbackFixtures {
    /// The callback of object `key` (hash `Fh`), to `url`.
    static func message(key: String, url: String = "http://biz.example/cb", body: String? = nil) -> CallbackMessage {
        CallbackMessage(
            bucket: "demo", key: key, etag: "Fh",
            request: CallbackRequest(
                urls: [url], body: body ?? "key=\(key)", contentType: QBoxSignature.formContentType,
                authScheme: "qbox:test-ak"))
    }

    /// Stores an empty object `key` at `now` with `outbox`'s message (born claimed by its process)
    /// or, without one, a pending message; returns the callback's entry.
    static func store(
        _ objects: any ObjectIndex, key: String, now: Int64, message: CallbackMessage? = nil,
        outbox: CallbackOutbox? = nil, claimedBy owner: String? = nil
    ) async throws -> OutboxEntry {
        let object = StoredObject(
            bucket: "demo", key: key, etag: "Fh", fsize: 0, mimeType: "text/plain", segments: [], putTime: now)
        let callback = message ?? Self.message(key: key)
        let outboxMessage = outbox?.message(for: callback) ?? callback.message(timeoutSeconds: 5, claimedBy: owner)
        guard case .stored(_, _, let entry?) = try await objects.putObject(
            object, mode: .replace, completion: nil, callback: outboxMessage)
        else { throw UpIndexError.notFound }
        return entry
    }
}
