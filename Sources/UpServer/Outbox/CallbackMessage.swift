import Outbox
import UpCore

/// The HTTP request of one upload callback (qiniu-protocol.md §3.1), as rendered when the object
/// was stored and signed anew at each attempt.
public struct CallbackRequest: Sendable, Equatable {
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
public struct CallbackMessage: Sendable, Equatable {
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

    /// The payload text: JSON with its members in name order (stable for diffs and tests), `host`
    /// left out when the policy set none — the text `JSONEncoder` with sorted keys wrote before,
    /// made without Foundation's encoder, which cost about 1 % of up-server's CPU per small upload.
    func encoded() -> String {
        var fields: [(key: String, value: JSONValue)] = [
            ("authScheme", .string(request.authScheme)), ("body", .string(request.body)),
            ("contentType", .string(request.contentType)),
        ]
        if let host = request.host { fields.append(("host", .string(host))) }
        fields.append(("urls", .array(request.urls.map(JSONValue.string))))
        let message: JSONValue = .object([
            ("bucket", .string(bucket)), ("etag", .string(etag)), ("key", .string(key)), ("request", .object(fields)),
        ])
        return message.serialized()
    }

    /// The message in an outbox entry's payload: any JSON text with these members, in any order
    /// and spacing (rows written by earlier versions included).
    ///
    /// - Throws: ``DamagedPayload`` for a payload that is not one (a damaged row).
    public init(payload: String) throws(DamagedPayload) {
        guard let json = try? JSONValue.parse(payload), let request = json["request"],
            let bucket = json["bucket"]?.stringValue, let key = json["key"]?.stringValue,
            let etag = json["etag"]?.stringValue, let body = request["body"]?.stringValue,
            let contentType = request["contentType"]?.stringValue, let authScheme = request["authScheme"]?.stringValue,
            case .array(let items)? = request["urls"]
        else { throw DamagedPayload() }
        let urls = items.compactMap(\.stringValue)
        guard urls.count == items.count else { throw DamagedPayload() }
        let host: String?
        switch request["host"] {
        case nil, .null?: host = nil
        case .string(let value)?: host = value
        default: throw DamagedPayload()
        }
        self.init(
            bucket: bucket, key: key, etag: etag,
            request: CallbackRequest(urls: urls, host: host, body: body, contentType: contentType, authScheme: authScheme))
    }

    /// An outbox payload that does not hold a callback message.
    public struct DamagedPayload: Error, Equatable {}
}
