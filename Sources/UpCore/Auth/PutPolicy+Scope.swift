// qiniu-protocol.md §1.3: what the scope allows.

extension PutPolicy {
    /// The bucket: ``scope`` up to the *first* `:` (keys may contain `:`), or all of it.
    public var bucket: String {
        guard let colon = scope.utf8.firstIndex(of: UInt8(ascii: ":")) else { return scope }
        return String(scope[..<colon])
    }

    /// The key (or prefix) part of ``scope`` after the first `:`; `nil` for a bucket-only scope.
    /// `"bucket:"` gives `""`: a token for the empty key only (§1.1, vector 1a'').
    public var scopeKey: String? {
        guard let colon = scope.utf8.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        // By bytes: `index(after:)` would step over a whole Character, and a combining mark
        // after the colon joins it in one.
        return String(decoding: scope.utf8[scope.utf8.index(after: colon)...], as: UTF8.self)
    }

    /// Whether an existing object under the key may be replaced by an upload of `kind`
    /// (§1.3 scope): never with ``insertOnly`` nor for a prefix scope; always for an exact-key
    /// scope; for a bucket-only scope only through v1 resumable upload.
    ///
    /// The put-policy document makes the bucket-only scope insert-only ("在这种格式下文件只能新
    /// 增") with one exception: "分片上传 v1 版 需要指定 insertOnly 为 1 才是新增，否则也为覆盖
    /// 上传" — v1 resumable (mkblk/bput/mkfile) overwrites unless `insertOnly` is 1. Form, `/put`
    /// and v2 stay insert-only; an insert-only upload of identical content still succeeds, which
    /// the caller decides.
    public func allowsOverwrite(through kind: UploadKind) -> Bool {
        guard !isInsertOnly, !isPrefixal else { return false }
        return scopeKey != nil || kind == .resumableV1
    }

    /// Checks that `key` (the final key, after ``saveKey`` selection) is allowed by the policy.
    ///
    /// Keys compare as UTF-8 bytes, never with Unicode canonical equivalence: two keys that
    /// merely look alike are different objects.
    ///
    /// - Parameter key: The final object key.
    /// - Throws: ``UpError`` `.keyNotInKeyLimit` when ``keylimit`` is set and lacks `key`;
    ///   `.keyMismatch` when the key differs from an exact scope key or lacks the scope prefix.
    public func authorize(key: String) throws(UpError) {
        if let keylimit, !keylimit.contains(where: { $0.utf8.elementsEqual(key.utf8) }) {
            throw UpError(.keyNotInKeyLimit, detail: "key \(key) not in keylimit")
        }
        guard let scopeKey else { return }
        if isPrefixal {
            guard key.utf8.starts(with: scopeKey.utf8) else {
                throw UpError(.keyMismatch, detail: "key \(key) lacks prefix \(scopeKey)")
            }
        } else {
            guard key.utf8.elementsEqual(scopeKey.utf8) else {
                throw UpError(.keyMismatch, detail: "key \(key) is not scope key \(scopeKey)")
            }
        }
    }

    /// Picks the final key (§1.3 "Final key selection"): ``saveKey`` if ``forceSaveKey``;
    /// else the client's key if given (an empty string counts as given, §1.3 [ambiguous]);
    /// else the rendered ``saveKey`` if set; else the etag. Check the result with
    /// ``authorize(key:)``.
    ///
    /// - Parameters:
    ///   - clientKey: The key the uploader sent, or `nil`.
    ///   - renderedSaveKey: ``saveKey`` rendered with ``MagicVariables/renderSaveKey(_:)``, or `nil` if unset.
    ///   - etag: The content hash.
    /// - Returns: The key to store under.
    /// - Throws: ``UpError`` `.badRequest` when ``forceSaveKey`` is set without a non-empty
    ///   ``saveKey``; `.invalidKey` when the chosen key breaks ``ObjectKeyRule`` (a client key, or
    ///   a saveKey rendered with `$(fname)` or `$(x:…)` values that make it so).
    public func finalKey(clientKey: String?, renderedSaveKey: String?, etag: String) throws(UpError) -> String {
        let key: String
        if forceSaveKey == true {
            guard let renderedSaveKey, !renderedSaveKey.isEmpty else {
                throw UpError(.badRequest, detail: "forceSaveKey without saveKey")
            }
            key = renderedSaveKey
        } else {
            key = clientKey ?? renderedSaveKey ?? etag
        }
        try ObjectKeyRule.check(key)
        return key
    }
}
