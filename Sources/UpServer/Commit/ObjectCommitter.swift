import Basics
import Foundation
import JSONText
import Outbox
import UpCore

/// Turns a finished upload into an object exactly as PutPolicy says (spec §1.3): final size and
/// MIME limits, final key (forceSaveKey / client key / saveKey / etag), scope and overwrite rules
/// (614 unless the same content is already there), then the object, its completion record and its
/// callback go into the index in ONE transaction (DESIGN.md: "Callbacks never get lost"), and the
/// callback is tried once synchronously; a failure leaves it in the outbox for background retries.
struct ObjectCommitter: Sendable {
    /// Where objects and completion records live.
    let objects: any ObjectIndex
    /// Where released blobs are removed.
    let blobs: any BlockStore
    /// Enqueues and tries callbacks.
    let callbacks: CallbackOutbox
    /// How callbacks are signed.
    let scheme: UpServerConfiguration.Callback.Scheme
    let clock: any WallClock
    let metrics: UpMetrics
    let logger: Logger

    /// How the object is written: `ObjectIndex.putObject` for form/mkfile/put,
    /// `MultipartIndex.completeUpload` for v2; the callback's outbox message goes with it.
    typealias Writer = @Sendable (StoredObject, PutMode, OutboxMessage?) async throws -> PutObjectOutcome

    /// Commits `request` as of now: the object's `putTime`, `$(uploadTime)` and the start of its
    /// callback's lease are the time of the commit, not of the request's start (a body may have
    /// streamed for minutes).
    func commit(_ request: CommitRequest, write: Writer) async throws -> CommitResult {
        let now = clock.unixSeconds
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
        let callback = callbackMessage(policy: policy, accessKey: request.token.accessKey, variables: variables, object: object)
        // spec §1.3: "<bucket>:<key>" may overwrite (unless insertOnly); bucket and prefix scopes
        // may not, except a bucket scope through v1 resumable upload.
        let mode: PutMode = policy.allowsOverwrite(through: request.kind) ? .replace : .insertOnly

        let outcome: PutObjectOutcome
        do {
            outcome = try await write(object, mode, callback.map(callbacks.message(for:)))
        } catch UpIndexError.objectExists {
            // Seed 000 / spec §1.3: an insert-only write of identical content is a success.
            guard let existing = try await objects.object(bucket: policy.bucket, key: key),
                existing.etag == request.etag
            else { throw UpError(.fileExists, detail: "\(policy.bucket):\(key)") }
            return try await answer(policy: policy, variables: variables, key: key, callback: callback.map { .unrecorded($0) })
        }
        switch outcome {
        case .alreadyCompleted(let completion):
            if let result = completion.result { return .stored(key: completion.objectKey, reply: Array(result.utf8)) }
            // No first result recorded: the first attempt answered 579 (callback failed), or died
            // (up-server killed) before its callback reply was recorded. A policy with a callback
            // must not get 200 without the callback's reply: the outcome of the callback's outbox
            // entry — attempted now if it is not delivered yet, so the one entry delivers once —
            // 200 with its reply, or 579 as the first time.
            if let callback, !policy.fetchesKeyFromCallback {
                let followed: Callback = completion.outboxID.map { .followed(entry: $0, callback) } ?? .unrecorded(callback)
                let result = try await answer(
                    policy: policy, variables: variables, key: completion.objectKey, callback: followed)
                if case .stored(_, let reply) = result {
                    await bookkeeping("record the mkfile result") {
                        _ = try await objects.recordCompletionResult(completion.key, result: String(decoding: reply, as: UTF8.self))
                    }
                }
                return result
            }
            return .stored(key: completion.objectKey, reply: Self.defaultReply(key: completion.objectKey, etag: completion.etag))
        case .stored(_, let released, let entry):
            metrics.uploadsCompleted.increment([request.kind.rawValue])
            await release(released)
            let result = try await answer(
                policy: policy, variables: variables, key: key, callback: entry.map { .enqueued($0) })
            if let completionKey = request.completionKey, case .stored(_, let reply) = result {
                // A repeated, finished mkfile answers with this first result, not 701.
                await bookkeeping("record the mkfile result") {
                    _ = try await objects.recordCompletionResult(completionKey, result: String(decoding: reply, as: UTF8.self))
                }
            }
            return result
        }
    }

    /// A callback to try now: the outbox entry the object was stored with (the attempt is
    /// recorded there), or, for an upload that was already stored, a try no entry records.
    private enum Callback {
        case enqueued(OutboxEntry)
        /// The entry stored with the object, for a repeat (``CallbackOutbox/outcomeForRepeat(of:)``);
        /// the message is delivered unrecorded only if the entry is gone.
        case followed(entry: Int64, CallbackMessage)
        case unrecorded(CallbackMessage)
    }

    /// Runs the callback (if any) or renders returnBody.
    private func answer(
        policy: PutPolicy, variables: MagicVariables, key: String, callback: Callback?
    ) async throws -> CommitResult {
        let outcome: CallbackOutcome
        switch callback {
        case nil:
            // spec §3.6: returnBody (JSON template) or the default {"hash","key"}.
            let reply = policy.returnBody.map { Array(variables.renderJSON($0).utf8) }
                ?? Self.defaultReply(key: key, etag: variables.etag)
            return .stored(key: key, reply: reply)
        case .enqueued(let entry): outcome = await callbacks.attemptNow(entry)
        case .followed(let id, let message):
            if let followed = try await callbacks.outcomeForRepeat(of: id) {
                outcome = followed
            } else {
                outcome = await callbacks.deliverUnrecorded(message.request)
            }
        case .unrecorded(let message): outcome = await callbacks.deliverUnrecorded(message.request)
        }
        switch outcome {
        case .delivered(let reply):
            if policy.fetchesKeyFromCallback {
                return try await fetchKey(from: reply, policy: policy, key: key)
            }
            return .stored(key: key, reply: reply)
        case .failed(let reason):
            logger.warning("callback failed", ["bucket": .string(policy.bucket), "key": .string(key), "reason": .string(reason)])
            return .callbackFailed(key: key, reason: reason)
        }
    }

    /// `callbackFetchKey=1` (spec §3.4): the reply is `{"key": "<final key>", "payload": <json>}`;
    /// the object moves to that key (its blobs stay, now referenced by the new name) and only
    /// `payload` goes back to the uploader. A reply of another shape, or a key ``ObjectKeyRule``
    /// refuses, is a callback failure (579): the object stays under its first key.
    private func fetchKey(from reply: [UInt8], policy: PutPolicy, key: String) async throws -> CommitResult {
        guard let json = try? JSONValue.parse(reply), let newKey = json["key"]?.stringValue, !newKey.isEmpty,
            let payload = json["payload"]
        else {
            return .callbackFailed(key: key, reason: "callbackFetchKey reply is not {\"key\",\"payload\"}")
        }
        if let violation = ObjectKeyRule.violation(in: newKey) {
            return .callbackFailed(key: key, reason: "callbackFetchKey reply names a bad key: \(violation)")
        }
        if newKey != key, let object = try await objects.object(bucket: policy.bucket, key: key) {
            var renamed = object
            renamed.key = newKey
            // The new name first, then the old one: the blobs are referenced throughout, so the
            // delete releases nothing; what the new name replaced is released.
            if case .stored(_, let released, _) = try await objects.putObject(
                renamed, mode: .replace, completion: nil, callback: nil)
            {
                await release(released)
            }
            _ = try await objects.deleteObject(bucket: policy.bucket, key: key)
        }
        return .stored(key: newKey, reply: payload.serializedBytes())
    }

    /// The policy's callback for `object`, rendered (spec §2, §3.1), or nil without one.
    private func callbackMessage(
        policy: PutPolicy, accessKey: String, variables: MagicVariables, object: StoredObject
    ) -> CallbackMessage? {
        guard let url = policy.callbackUrl, !url.isEmpty else { return nil }
        let isJSON = policy.callbackBodyType?.lowercased().hasPrefix("application/json") == true
        let template = policy.callbackBody ?? ""
        let body = isJSON ? variables.renderJSON(template) : variables.renderForm(template)
        let urls = MagicVariables.renderCallbackURL(url, body: Array(body.utf8)).split(separator: ";").map {
            String($0).trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
        let request = CallbackRequest(
            urls: urls, host: policy.callbackHost, body: body,
            contentType: isJSON ? "application/json" : QBoxSignature.formContentType,
            // "<scheme>:<AccessKey>": the callback is signed with the key that signed the token.
            authScheme: scheme.rawValue + ":" + accessKey)
        return CallbackMessage(bucket: object.bucket, key: object.key, etag: object.etag, request: request)
    }

    /// An index write after the object's transaction committed: the object, its completion and
    /// its outbox entry are stored, so a failure here (typically a full disk: 503) must not turn
    /// the answer into an error — the client would retry an upload that succeeded, and a v2
    /// complete would find its id completed and get 612, losing its parts. What is lost is
    /// harmless: an mkfile result not recorded makes a repeated mkfile run the callback again.
    /// (An attempt's outcome the outbox cannot record leaves its entry claimed: a delivery is
    /// recorded later by this process, a failure is attempted again after the lease:
    /// `OutboxWorker.attempt`.)
    private func bookkeeping(_ what: String, _ write: () async throws -> Void) async {
        do {
            try await write()
        } catch {
            logger.warning("after the object was stored, could not \(what)", ["error": .string("\(error)")])
        }
    }

    /// Deletes blobs a replaced object no longer uses; best effort (the sweeper finds leftovers).
    private func release(_ released: [BlobID]) async {
        await blobs.release(released, what: "released blobs", logger: logger)
    }

    /// `{"hash":"<etag>","key":"<key>"}` (spec §1.3 returnBody default).
    static func defaultReply(key: String, etag: String) -> [UInt8] {
        var out = "{\"hash\":"
        JSONText.appendString(etag, to: &out)
        out += ",\"key\":"
        JSONText.appendString(key, to: &out)
        return Array((out + "}").utf8)
    }
}
