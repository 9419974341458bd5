/// Whom an upload token is for: the key prefix it is scoped to and the policy's `endUser`.
struct TokenSubject: Sendable, Equatable {
    var keyPrefix: String
    var endUser: String
    /// Bytes the token may allow at most (an end user's daily allowance left), if limited.
    var remainingBytes: Int64?

    /// An API client asking for itself: its prefix with `{client}` filled in, its `endUser` or id.
    init(_ client: BizServerConfiguration.Client) {
        keyPrefix = client.resolvedKeyPrefix
        endUser = client.endUser ?? client.id
    }

    /// An end user authenticated by JWT.
    init(_ user: EndUserAuthenticator.EndUser) {
        keyPrefix = user.keyPrefix
        endUser = user.subject
        remainingBytes = user.remainingBytes
    }
}
