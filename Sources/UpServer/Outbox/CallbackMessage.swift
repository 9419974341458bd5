import Foundation
import Outbox

/// The HTTP request of one upload callback (qiniu-protocol.md §3.1), as rendered when the object
/// was stored and signed anew at each attempt.
public struct CallbackRequest: Sendable, Equatable, Codable {
    /// `callbackUrl` candidates, tried in order (Appendix A.2: next URL on failure). Never empty.
    public var urls: [String]
    /// `callbackHost`, if the policy set one.
    public var host: String?
    /// The rendered callback body.
    public var body: String
    /// `callbackBodyType`.
    public var contentType: String
    /// `<scheme>:<AccessKey>` (or only the scheme): how to sign at send time (`QBox`, `Qiniu`).
    public var authScheme: String

    /// Creates a request.
    public init(urls: [String], host: String? = nil, body: String, contentType: String, authScheme: String) {
        self.urls = urls
        self.host = host
        self.body = body
        self.contentType = contentType
        self.authScheme = authScheme
    }
}

/// An upload callback as the callback outbox keeps it: the payload of its `OutboxEntry` (JSON),
/// written in the same transaction as its object (DESIGN.md "Callbacks never get lost"), so an
/// object never exists without its callback and a callback never names an object not stored.
public struct CallbackMessage: Sendable, Equatable, Codable {
    /// The object's bucket.
    public var bucket: String
    /// The object's key.
    public var key: String
    /// The object's hash.
    public var etag: String
    /// What to send.
    public var request: CallbackRequest

    /// Creates a message.
    public init(bucket: String, key: String, etag: String, request: CallbackRequest) {
        self.bucket = bucket
        self.key = key
        self.etag = etag
        self.request = request
    }

    /// The outbox table in the index database (`SQLiteUpIndex`'s migration 2 creates it).
    public static let table = "callback_outbox"

    /// Seconds a claim holds a callback beyond its URLs' timeouts: one attempt tries every URL in
    /// turn, each for at most `timeoutSeconds`, so a live owner always finishes inside its lease.
    static let leaseMargin: Int64 = 5

    /// The outbox message: this callback as JSON, with a lease covering one attempt, born claimed
    /// by `owner` when the storing request tries it at once.
    func message(timeoutSeconds: Double, claimedBy owner: String?) -> OutboxMessage {
        let lease = Int64(timeoutSeconds.rounded(.up)) * Int64(max(request.urls.count, 1)) + Self.leaseMargin
        return OutboxMessage(payload: encoded(), leaseSeconds: lease, claimedBy: owner)
    }

    /// The payload text: JSON with sorted keys (stable for diffs and tests).
    func encoded() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding strings and arrays of strings cannot fail.
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// The message in an outbox entry's payload.
    ///
    /// - Throws: `DecodingError` for a payload that is not one (a damaged row).
    public init(payload: String) throws {
        self = try JSONDecoder().decode(CallbackMessage.self, from: Data(payload.utf8))
    }
}
