/// The rule for the text values an upload carries besides its key — `fname`, `mimeType`, `x:`
/// variables, `x-qn-meta-` values, from form fields, B64 path segments or the v2 complete
/// body: UTF-8 (each decoder checks that) without NUL (U+0000). Every one of them is stored
/// (the object's row, the callback outbox, biz-server's record) and PostgreSQL's `text` cannot
/// hold NUL, so such a value is refused with 400 before anything is acknowledged rather than
/// failing a write after the bytes are stored. Keys have their own, stricter ``ObjectKeyRule``.
public enum ProtocolText {
    /// Whether `text` may be stored: it holds no NUL.
    /// Inlinable so that callers get it specialized for `String`: the unspecialized walk of
    /// `utf8` costs a protocol call per byte, a visible share of a token request.
    @inlinable
    public static func allows(_ text: some StringProtocol) -> Bool { !text.utf8.contains(0) }

    /// Checks `text`, the value of `field`.
    ///
    /// - Throws: ``UpError`` `.badRequest` naming `field` in its log-only detail.
    public static func check(_ text: some StringProtocol, field: some StringProtocol) throws(UpError) {
        guard allows(text) else { throw UpError(.badRequest, detail: "\(field.prefix(64)) contains NUL") }
    }
}
