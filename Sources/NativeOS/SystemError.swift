#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Words for an `errno` value, for the one-line messages the servers print (`cannot listen on
/// 127.0.0.1:8080: address already in use`): the C library's text with its first letter in lower
/// case, so it reads as the end of a sentence.
public enum SystemError {
    /// `strerror(code)`, first letter lowered; `errno <code>` when the C library has no text.
    public static func message(_ code: Int32) -> String {
        guard let text = unsafe strerror(code).map({ unsafe String(cString: $0) }), !text.isEmpty else {
            return "errno \(code)"
        }
        return text.prefix(1).lowercased() + text.dropFirst()
    }

    /// The calling thread's current `errno`.
    public static var current: Int32 { errno }
}
