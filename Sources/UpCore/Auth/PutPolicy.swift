/// The upload policy signed into an ``UpToken`` (qiniu-protocol.md §1.3).
///
/// Every documented field is typed; anything else (legacy `transform`, `callbackTimeout`,
/// `checksum`, future fields) is kept in ``unknownFields`` in document order, so a policy
/// parsed and serialized again loses nothing. `nil` means "not set".
///
/// ```swift
/// var policy = PutPolicy(scope: "photos:cat.jpg", deadline: now + 3600)
/// policy.callbackUrl = "http://127.0.0.1:8080/callback"
/// policy.callbackBody = "key=$(key)&hash=$(etag)"
/// let token = UpToken.sign(policy, accessKey: ak, mac: mac)
/// ```
public struct PutPolicy: Sendable, Equatable {
    /// `"<bucket>"`, `"<bucket>:<key>"` or `"<bucket>:<prefix>"` (with ``isPrefixalScope``). Required.
    public var scope: String
    /// Unix seconds after which the token is refused (`now > deadline`). Required; Int64 (§1.3).
    public var deadline: Int64
    /// `1`: the key part of ``scope`` is a prefix.
    public var isPrefixalScope: Int?
    /// Non-zero: never overwrite an existing key (→ 614).
    public var insertOnly: Int?
    /// Opaque end-user id, exposed as `$(endUser)`.
    public var endUser: String?
    /// Form uploads only: answer 303 to this URL with `upload_ret` (§3.6).
    public var returnUrl: String?
    /// JSON template returned to the uploader (§2); ignored when ``callbackUrl`` is set.
    public var returnBody: String?
    /// One or more callback URLs separated by `;` (§3).
    public var callbackUrl: String?
    /// `Host` header of the callback request.
    public var callbackHost: String?
    /// Callback body template (§2); missing means empty (§1.3 [ambiguous → accept missing as empty]).
    public var callbackBody: String?
    /// `application/x-www-form-urlencoded` (default) or `application/json`.
    public var callbackBodyType: String?
    /// `1`: the callback reply names the final key (§3.4).
    public var callbackFetchKey: Int?
    /// Async processing commands; accepted and ignored locally.
    public var persistentOps: String?
    /// Notification URL of async processing; accepted and ignored locally.
    public var persistentNotifyUrl: String?
    /// Processing queue; accepted and ignored locally.
    public var persistentPipeline: String?
    /// Processing type; accepted and ignored locally.
    public var persistentType: Int?
    /// Workflow template id; accepted and ignored locally.
    public var persistentWorkflowTemplateID: String?
    /// Key template (§2), used when the client gives no key or ``forceSaveKey`` is true.
    public var saveKey: String?
    /// `true`: always name the object by ``saveKey``.
    public var forceSaveKey: Bool?
    /// Smallest allowed size in bytes (→ 403 below it).
    public var fsizeMin: Int64?
    /// Largest allowed size in bytes (→ 413 above it).
    public var fsizeLimit: Int64?
    /// Non-zero: sniff the MIME type, ignoring the client's.
    public var detectMime: Int?
    /// `;`-separated MIME allow-list, `*` subtype wildcard, leading `!` for a deny-list.
    public var mimeLimit: String?
    /// Storage class: 0 standard, 1 IA, 2 archive, 3 deep archive, 4 archive-IR.
    public var fileType: Int?
    /// Expire the object after this many days.
    public var deleteAfterDays: Int?
    /// Allowed keys (≤ 20); a key must then be supplied.
    public var keylimit: [String]?
    /// Download speed limit hint; ignored.
    public var trafficLimit: Int64?
    /// Members that are none of the above, in document order; serialized after the known ones.
    public var unknownFields: [(key: String, value: JSONValue)]

    /// Creates a policy with the two required fields; set the others as properties.
    ///
    /// - Parameters:
    ///   - scope: `bucket`, `bucket:key` or `bucket:prefix`.
    ///   - deadline: Unix seconds.
    public init(scope: String, deadline: Int64) {
        self.scope = scope
        self.deadline = deadline
        self.unknownFields = []
    }

    /// Field-by-field equality; unknown fields compare in order.
    public static func == (lhs: PutPolicy, rhs: PutPolicy) -> Bool {
        lhs.json == rhs.json
    }

    /// Whether ``isPrefixalScope`` is set to a non-zero value.
    public var isPrefixal: Bool { (isPrefixalScope ?? 0) != 0 }

    /// Whether ``insertOnly`` is set to a non-zero value.
    public var isInsertOnly: Bool { (insertOnly ?? 0) != 0 }

    /// Whether ``callbackFetchKey`` is set to a non-zero value.
    public var fetchesKeyFromCallback: Bool { (callbackFetchKey ?? 0) != 0 }
}
