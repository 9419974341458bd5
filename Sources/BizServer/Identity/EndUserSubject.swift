/// A JWT `sub` as the one path segment of an object key it becomes: `users/{sub}/…`.
///
/// The prefix is the whole of a user's authority (DESIGN.md: the token is scoped to it), so a sub
/// must not be able to step out of its segment or into another user's: no `/` or `\`, no `..`, no
/// `.` alone, no control characters, at most 128 bytes, and no `$`, which would make
/// `users/$(fname)/` a magic variable in the saveKey the up server renders (qiniu-protocol.md §2).
/// Every sub of Auth0 (`auth0|5f…`), Cognito and Keycloak (UUIDs), Firebase (28 characters) and
/// Google (digits) passes.
enum EndUserSubject {
    /// Longest sub accepted, in UTF-8 bytes.
    static let maxBytes = 128

    /// Whether `sub` can be a key segment (see above).
    static func isKeySegment(_ sub: String) -> Bool {
        guard (1...maxBytes).contains(sub.utf8.count), sub != ".", !sub.contains("..") else { return false }
        return sub.unicodeScalars.allSatisfy { scalar in
            scalar != "/" && scalar != "\\" && scalar != "$" && scalar.properties.generalCategory != .control
        }
    }

    /// `template` (e.g. `users/{sub}/`) with `{sub}` filled in once, never re-scanned, so a sub
    /// containing `{sub}` or `{client}` stays literal.
    static func keyPrefix(_ template: String, sub: String) -> String {
        template.replacing("{sub}", with: sub, maxReplacements: 1)
    }
}
