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
    var protocolName: String
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
        try policy.checkMimeType(mimeType)

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
        let callback = callbackEntry(policy: policy, variables: variables, now: now)
        // spec §1.3: "<bucket>:<key>" may overwrite (unless insertOnly); bucket and prefix scopes may not.
        let mode: PutMode = policy.allowsOverwrite ? .replace : .insertOnly

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
            let reply = completion.result.map { Array($0.utf8) } ?? Self.defaultReply(key: completion.objectKey, etag: completion.etag)
            return .stored(key: completion.objectKey, reply: reply)
        case .stored(_, let released, let outboxID):
            metrics.uploadsCompleted.increment([request.protocolName])
            await release(released)
            let result = try await answer(
                policy: policy, variables: variables, key: key, outboxID: outboxID, callback: callback, now: now)
            if let completionKey = request.completionKey, case .stored(_, let reply) = result {
                // A repeated, finished mkfile answers with this first result, not 701.
                _ = try await index.recordCompletionResult(completionKey, result: String(decoding: reply, as: UTF8.self))
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
            if let outboxID { try await index.markDelivered(outboxID, reply: String(decoding: reply, as: UTF8.self)) }
            return .stored(key: key, reply: reply)
        case .failed(let reason):
            metrics.callbackFailures.increment()
            if let outboxID {
                let delay = configuration.callback.retryDelay(afterAttempt: 1)
                try await index.markAttemptFailed(outboxID, error: reason, nextAttemptAt: delay.map { now + $0 })
            }
            logger.warning("callback failed", ["bucket": .string(policy.bucket), "key": .string(key), "reason": .string(reason)])
            return .callbackFailed(key: key, reason: reason)
        }
    }

    /// The outbox entry for the policy's callback, rendered (spec §2, §3.1), or nil without one.
    private func callbackEntry(policy: PutPolicy, variables: MagicVariables, now: Int64) -> NewOutboxEntry? {
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
            authScheme: configuration.callback.scheme.rawValue, firstAttemptAt: now)
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
