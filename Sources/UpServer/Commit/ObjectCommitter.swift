import Basics
import Foundation
import UpCore

/// What a finished upload (form POST, mkfile, v2 complete) hands over to become an object.
struct CommitRequest: Sendable {
    var token: UpToken
    /// The key the client asked for; nil when it supplied none (spec §1.3 "Final key selection").
    var clientKey: String?
    var fname: String?
    var clientMimeType: String?
    /// Type sniffed from the first bytes (spec §1.3 detectMime / mimeLimit).
    var sniffedMimeType: String?
    /// `x:` variables, in the order received.
    var customVariables: [(name: String, value: String)] = []
    /// `x-qn-meta-` metadata.
    var metadata: [(name: String, value: String)] = []
    var etag: String
    var fsize: Int64
    var segments: [Segment]
    /// Which protocol uploaded it: decides the overwrite rule of a bucket-only scope (§1.3).
    var kind: UploadKind
    /// mkfile idempotency (DESIGN.md): the first result is recorded under this key.
    var completionKey: CompletionKey?
}

/// The uploader's answer: the JSON to relay (200) or the callback failure (579, object stored).
enum CommitResult: Sendable, Equatable {
    /// 200 with this JSON body (returnBody, the default `{"hash","key"}`, or the callback reply).
    case stored(key: String, reply: [UInt8])
    /// 579: stored, but no callback URL accepted the callback; the outbox keeps retrying.
    case callbackFailed(key: String, reason: String)
}

/// Turns a finished upload into an object exactly as PutPolicy says (spec §1.3): final size and
/// MIME limits, final key (forceSaveKey / client key / saveKey / etag), scope and overwrite rules
/// (614 unless the same content is already there), then the object, its completion record and its
/// callback go into the index in ONE transaction (DESIGN.md: "Callbacks never get lost"), and the
/// callback is tried once synchronously; a failure leaves it in the outbox for background retries.
struct ObjectCommitter: Sendable {
    let index: any UpIndex
    let store: any BlockStore
    let callbacks: any CallbackDelivering
    let configuration: UpServerConfiguration
    let metrics: UpMetrics
    let logger: Logger

    /// How the object is written: `putObject` for form/mkfile, `completeUpload` for v2.
    typealias Writer = @Sendable (StoredObject, PutMode, NewOutboxEntry?) async throws -> PutObjectOutcome

    func commit(_ request: CommitRequest, now: Int64, write: Writer) async throws -> CommitResult {
        let policy = request.token.policy
        try policy.checkSize(request.fsize)
        let mimeType = MimeResolution.resolve(
            detectMime: policy.detectMime, clientMimeType: request.clientMimeType, fname: request.fname,
            key: request.clientKey, sniffed: request.sniffedMimeType)
        // §1.3 mimeLimit: matched against the type detected from the content — never the one
        // the client declared, whatever detectMime says (the put-policy document: the server
        // "侦测文件内容以判断 MimeType，再用判断值跟指定值进行匹配"). Content the sniffer does not
        // recognise is application/octet-stream.
        try policy.checkMimeType(request.sniffedMimeType ?? MimeResolution.fallback)

        var variables = MagicVariables(
            bucket: policy.bucket, key: "", etag: request.etag, fsize: request.fsize, mimeType: mimeType,
            fname: request.fname, endUser: policy.endUser,
            customVariables: request.customVariables.filter { $0.name.hasPrefix("x:") }, uploadTime: now,
            uuid: UUID().uuidString.lowercased())
        let key = try policy.finalKey(
            clientKey: request.clientKey, renderedSaveKey: policy.saveKey.map { variables.renderSaveKey($0) },
            etag: request.etag)
        try policy.authorize(key: key)
        variables.key = key

        let object = StoredObject(
            bucket: policy.bucket, key: key, etag: request.etag, fsize: request.fsize, mimeType: mimeType,
            segments: request.segments, metadata: Dictionary(request.metadata, uniquingKeysWith: { _, last in last }),
            putTime: now, deleteAfterDays: policy.deleteAfterDays, fileType: policy.fileType ?? 0)
        let callback = callbackEntry(policy: policy, accessKey: request.token.accessKey, variables: variables, now: now)
        // spec §1.3: "<bucket>:<key>" may overwrite (unless insertOnly); bucket and prefix scopes
        // may not, except a bucket scope through v1 resumable upload.
        let mode: PutMode = policy.allowsOverwrite(through: request.kind) ? .replace : .insertOnly

        let outcome: PutObjectOutcome
        do {
            outcome = try await write(object, mode, callback)
        } catch UpIndexError.objectExists {
            // Seed 000 / spec §1.3: an insert-only write of identical content is a success.
            guard let existing = try await index.object(bucket: policy.bucket, key: key),
                existing.etag == request.etag
            else { throw UpError(.fileExists, detail: "\(policy.bucket):\(key)") }
            return try await answer(policy: policy, variables: variables, key: key, outboxID: nil, callback: callback, now: now)
        }
        switch outcome {
        case .alreadyCompleted(let completion):
            if let result = completion.result { return .stored(key: completion.objectKey, reply: Array(result.utf8)) }
            // No first result recorded: the first attempt answered 579 (callback failed), or died
            // (up-server killed) before its callback reply was recorded. A policy with a callback
            // must not get 200 without the callback's reply: try the callback again (the receiver
            // deduplicates; the outbox entry of the first attempt keeps its own retries) — 200
            // with its reply, or 579 as the first time.
            if let callback, !policy.fetchesKeyFromCallback {
                let result = try await answer(
                    policy: policy, variables: variables, key: completion.objectKey, outboxID: nil, callback: callback,
                    now: now)
                if case .stored(_, let reply) = result {
                    await bookkeeping("record the mkfile result") {
                        _ = try await index.recordCompletionResult(completion.key, result: String(decoding: reply, as: UTF8.self))
                    }
                }
                return result
            }
            return .stored(key: completion.objectKey, reply: Self.defaultReply(key: completion.objectKey, etag: completion.etag))
        case .stored(_, let released, let outboxID):
            metrics.uploadsCompleted.increment([request.kind.rawValue])
            await release(released)
            let result = try await answer(
                policy: policy, variables: variables, key: key, outboxID: outboxID, callback: callback, now: now)
            if let completionKey = request.completionKey, case .stored(_, let reply) = result {
                // A repeated, finished mkfile answers with this first result, not 701.
                await bookkeeping("record the mkfile result") {
                    _ = try await index.recordCompletionResult(completionKey, result: String(decoding: reply, as: UTF8.self))
                }
            }
            return result
        }
    }

    /// Runs the callback (if any) or renders returnBody.
    private func answer(
        policy: PutPolicy, variables: MagicVariables, key: String, outboxID: Int64?, callback: NewOutboxEntry?,
        now: Int64
    ) async throws -> CommitResult {
        guard let callback else {
            // spec §3.6: returnBody (JSON template) or the default {"hash","key"}.
            let reply = policy.returnBody.map { Array(variables.renderJSON($0).utf8) }
                ?? Self.defaultReply(key: key, etag: variables.etag)
            return .stored(key: key, reply: reply)
        }
        metrics.callbackAttempts.increment()
        switch await callbacks.deliver(callback) {
        case .delivered(let reply):
            if let outboxID {
                await bookkeeping("mark the callback delivered") {
                    try await index.markDelivered(outboxID, reply: String(decoding: reply, as: UTF8.self))
                }
            }
            if policy.fetchesKeyFromCallback {
                return try await fetchKey(from: reply, policy: policy, key: key)
            }
            return .stored(key: key, reply: reply)
        case .failed(let reason):
            metrics.callbackFailures.increment()
            if let outboxID {
                let delay = configuration.callback.retryDelay(afterAttempt: 1)
                await bookkeeping("record the failed callback attempt") {
                    try await index.markAttemptFailed(outboxID, error: reason, nextAttemptAt: delay.map { now + $0 })
                }
            }
            logger.warning("callback failed", ["bucket": .string(policy.bucket), "key": .string(key), "reason": .string(reason)])
            return .callbackFailed(key: key, reason: reason)
        }
    }

    /// `callbackFetchKey=1` (spec §3.4): the reply is `{"key": "<final key>", "payload": <json>}`;
    /// the object moves to that key (its blobs stay, now referenced by the new name) and only
    /// `payload` goes back to the uploader. A reply of another shape is a callback failure (579).
    private func fetchKey(from reply: [UInt8], policy: PutPolicy, key: String) async throws -> CommitResult {
        guard let json = try? JSONValue.parse(reply), let newKey = json["key"]?.stringValue, !newKey.isEmpty,
            let payload = json["payload"]
        else {
            return .callbackFailed(key: key, reason: "callbackFetchKey reply is not {\"key\",\"payload\"}")
        }
        if newKey != key, let object = try await index.object(bucket: policy.bucket, key: key) {
            var renamed = object
            renamed.key = newKey
            // The new name first, then the old one: the blobs are referenced throughout, so the
            // delete releases nothing; what the new name replaced is released.
            if case .stored(_, let released, _) = try await index.putObject(
                renamed, mode: .replace, completion: nil, callback: nil)
            {
                await release(released)
            }
            _ = try await index.deleteObject(bucket: policy.bucket, key: key)
        }
        return .stored(key: newKey, reply: payload.serializedBytes())
    }

    /// The outbox entry for the policy's callback, rendered (spec §2, §3.1), or nil without one.
    private func callbackEntry(
        policy: PutPolicy, accessKey: String, variables: MagicVariables, now: Int64
    ) -> NewOutboxEntry? {
        guard let url = policy.callbackUrl, !url.isEmpty else { return nil }
        let isJSON = policy.callbackBodyType?.lowercased().hasPrefix("application/json") == true
        let template = policy.callbackBody ?? ""
        let body = isJSON ? variables.renderJSON(template) : variables.renderForm(template)
        let urls = MagicVariables.renderCallbackURL(url, body: Array(body.utf8)).split(separator: ";").map {
            String($0).trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
        return NewOutboxEntry(
            urls: urls, host: policy.callbackHost, body: body,
            contentType: isJSON ? "application/json" : QBoxSignature.formContentType,
            // "<scheme>:<AccessKey>": the callback is signed with the key that signed the token.
            authScheme: configuration.callback.scheme.rawValue + ":" + accessKey, firstAttemptAt: now)
    }

    /// An index write after the object's transaction committed: the object, its completion and
    /// its outbox entry are stored, so a failure here (typically a full disk: 503) must not turn
    /// the answer into an error — the client would retry an upload that succeeded, and a v2
    /// complete would find its id completed and get 612, losing its parts. What is lost is
    /// harmless: an entry not marked delivered stays pending and the outbox retrier delivers it
    /// again (the receiver deduplicates); a failed attempt not recorded is retried at once; an
    /// mkfile result not recorded makes a repeated mkfile run the callback again.
    private func bookkeeping(_ what: String, _ write: () async throws -> Void) async {
        do {
            try await write()
        } catch {
            logger.warning("after the object was stored, could not \(what)", ["error": .string("\(error)")])
        }
    }

    /// Deletes blobs a replaced object no longer uses; best effort (the sweeper finds leftovers).
    private func release(_ blobs: [BlobID]) async {
        guard !blobs.isEmpty else { return }
        let store = self.store
        do {
            try await BlockingWork.run { for blob in blobs { try store.remove(blob) } }
        } catch {
            logger.warning("could not remove released blobs", ["error": .string("\(error)")])
        }
    }

    /// `{"hash":"<etag>","key":"<key>"}` (spec §1.3 returnBody default).
    static func defaultReply(key: String, etag: String) -> [UInt8] {
        var out = "{\"hash\":"
        JSONValue.writeString(etag, to: &out)
        out += ",\"key\":"
        JSONValue.writeString(key, to: &out)
        return Array((out + "}").utf8)
    }
}
