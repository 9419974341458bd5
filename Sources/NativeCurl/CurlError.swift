/// A libcurl failure: the `CURLcode`, libcurl's explanation, and the system error behind it.
///
/// Conditions this wrapper detects itself reuse the closest libcurl code, so callers classify
/// every failure in one place: a response over the size cap is ``Code/fileSizeExceeded``, a
/// cancelled transfer ``Code/abortedByCallback``, an unreadable body file ``Code/readError``
/// (with `systemErrno` set), a malformed request ``Code/badFunctionArgument``.
public struct CurlError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A `CURLcode` value with names for the ones callers branch on.
    public struct Code: RawRepresentable, Hashable, Sendable {
        /// The numeric `CURLcode`.
        public var rawValue: Int
        /// Wraps a numeric `CURLcode`.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// `CURLE_UNSUPPORTED_PROTOCOL` (1): only http and https are enabled.
        public static let unsupportedProtocol = Code(rawValue: 1)
        /// `CURLE_URL_MALFORMAT` (3).
        public static let urlMalformat = Code(rawValue: 3)
        /// `CURLE_COULDNT_RESOLVE_PROXY` (5).
        public static let couldntResolveProxy = Code(rawValue: 5)
        /// `CURLE_COULDNT_RESOLVE_HOST` (6).
        public static let couldntResolveHost = Code(rawValue: 6)
        /// `CURLE_COULDNT_CONNECT` (7): refused or unreachable.
        public static let couldntConnect = Code(rawValue: 7)
        /// `CURLE_PARTIAL_FILE` (18): the connection closed before the whole response arrived
        /// (also reported by this wrapper for a response cut inside its head).
        public static let partialFile = Code(rawValue: 18)
        /// `CURLE_WRITE_ERROR` (23).
        public static let writeError = Code(rawValue: 23)
        /// `CURLE_READ_ERROR` (26): the request body could not be read.
        public static let readError = Code(rawValue: 26)
        /// `CURLE_OUT_OF_MEMORY` (27).
        public static let outOfMemory = Code(rawValue: 27)
        /// `CURLE_OPERATION_TIMEDOUT` (28): connect, total or low-speed timeout.
        public static let operationTimedOut = Code(rawValue: 28)
        /// `CURLE_ABORTED_BY_CALLBACK` (42): the transfer was cancelled.
        public static let abortedByCallback = Code(rawValue: 42)
        /// `CURLE_BAD_FUNCTION_ARGUMENT` (43): the request itself is invalid.
        public static let badFunctionArgument = Code(rawValue: 43)
        /// `CURLE_GOT_NOTHING` (52): the server closed without a response.
        public static let gotNothing = Code(rawValue: 52)
        /// `CURLE_SEND_ERROR` (55).
        public static let sendError = Code(rawValue: 55)
        /// `CURLE_RECV_ERROR` (56).
        public static let recvError = Code(rawValue: 56)
        /// `CURLE_FILESIZE_EXCEEDED` (63): the response is larger than allowed.
        public static let fileSizeExceeded = Code(rawValue: 63)
    }

    /// What failed.
    public var code: Code
    /// libcurl's error buffer text, or this wrapper's explanation.
    public var message: String
    /// The `errno` behind the failure (file open/read, socket), 0 if none.
    public var systemErrno: Int32

    /// Creates an error.
    public init(code: Code, message: String, systemErrno: Int32 = 0) {
        self.code = code
        self.message = message
        self.systemErrno = systemErrno
    }

    /// `curl error <code>: <message>`.
    public var description: String { "curl error \(code.rawValue): \(message)" }
}
