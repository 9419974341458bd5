import HTTPKit

extension Request {
    /// The declared `Content-Length`, when present and a decimal number: lets a handler refuse an
    /// oversized chunk or part before reading it (the streamed count is still checked).
    var declaredLength: Int64? {
        guard let text = headers["Content-Length"], !text.isEmpty, text.utf8.count <= 18,
            text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { return nil }
        return Int64(text)
    }
}
