internal import CCurl
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One request on one libcurl easy handle: owns the `CURL *`, its header list, the body file
/// descriptor and the response being collected.
///
/// Created and configured on the caller's thread, then handed to the ``CurlMultiLoop`` thread,
/// which alone touches it until ``finish(code:)``; only ``cancel()`` and ``isCancelled`` cross
/// threads (an atomic). That hand-over is why the type is `@unchecked Sendable`; it is `@safe`
/// because every pointer it stores is created and freed here and never handed out.
@safe final class CurlTransfer: @unchecked Sendable {
    /// Completion, called exactly once on the loop thread.
    typealias Completion = @Sendable (Result<CurlResponse, CurlError>) -> Void

    /// Unique within one ``CurlMulti``; the key for cancellation.
    let id: UInt64
    /// `CURL *`, cleaned up in `deinit`.
    let easy: UnsafeMutableRawPointer
    var headerList: UnsafeMutablePointer<curl_slist>?
    /// CURLOPT_ERRORBUFFER: libcurl writes its explanation here (CURL_ERROR_SIZE bytes).
    let errorBuffer: UnsafeMutablePointer<CChar>

    // Request body (read by the READFUNCTION callback).
    /// Let go of when the transfer finishes, before its outcome is delivered: the caller may then
    /// refill the same buffer without a copy (an array still shared here would be copied).
    private(set) var bodyBytes: [UInt8]
    /// The producer's pipe of a streamed body.
    let bodyPipe: CurlBodyPipe?
    private(set) var fileDescriptor: Int32 = -1
    private(set) var bodyOffset: Int64 = 0
    private(set) var bodyLength: Int64 = 0
    var bodyPosition: Int64 = 0
    var readFailure: (errno: Int32, message: String)?

    // Response (filled by the WRITEFUNCTION / HEADERFUNCTION callbacks).
    var responseHeaders: [(name: String, value: String)] = []
    var responseBody: [UInt8] = []
    /// Whether the blank line ending the (last) response's head arrived. libcurl reports success
    /// when the connection closes after the status line but inside the header fields, with no
    /// body: such a response is cut, not complete.
    var responseHeadComplete = false
    let maxResponseBytes: Int
    var exceededResponseLimit = false
    /// Where a streamed response's body goes; the head is delivered at the first body byte.
    let responsePipe: CurlResponsePipe?
    var deliveredHead = false

    // Progress (XFERINFOFUNCTION).
    let progress: (@Sendable (Int64) -> Void)?
    var reportedProgress: Int64 = 0

    private let cancelled = Atomic<Bool>(false)
    private var completion: Completion?

    private init(id: UInt64, easy: UnsafeMutableRawPointer, request: CurlRequest, responsePipe: CurlResponsePipe?) {
        self.id = id
        unsafe self.easy = easy
        unsafe errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        unsafe errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        if case .bytes(let bytes) = request.body { bodyBytes = bytes } else { bodyBytes = [] }
        if case .stream(let pipe, _) = request.body { bodyPipe = pipe } else { bodyPipe = nil }
        self.responsePipe = responsePipe
        maxResponseBytes = request.maxResponseBytes
        progress = request.progress
    }

    /// A configured transfer, or the reason the request cannot be sent. Configuration happens
    /// after `init` so that a failure part-way still runs `deinit` and frees everything.
    /// With a `responsePipe`, `completion` fires as soon as the response head is in (with an
    /// empty body) and the body flows into the pipe.
    static func make(
        id: UInt64, request: CurlRequest, responsePipe: CurlResponsePipe? = nil, completion: @escaping Completion
    ) throws(CurlError) -> CurlTransfer {
        if let problem = request.validationFailure() {
            throw CurlError(code: .badFunctionArgument, message: problem)
        }
        try CurlGlobal.ensureInitialized()
        guard let easy = unsafe curl_easy_init() else {
            throw CurlError(code: .outOfMemory, message: "curl_easy_init failed")
        }
        let transfer = unsafe CurlTransfer(id: id, easy: easy, request: request, responsePipe: responsePipe)
        try transfer.openBody(request.body)
        try transfer.configure(request)
        transfer.completion = completion
        return transfer
    }

    deinit {
        unsafe curl_easy_cleanup(easy)
        unsafe curl_slist_free_all(headerList)
        if fileDescriptor >= 0 { _ = Glibc.close(fileDescriptor) }
        unsafe errorBuffer.deallocate()
    }

    /// Marks the transfer cancelled; the loop removes it, and callbacks stop it if they run first.
    func cancel() { cancelled.store(true, ordering: .releasing) }

    /// Whether ``cancel()`` was called.
    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Delivers the outcome of libcurl's `CURLMSG_DONE` (loop thread, after removal from the multi).
    func finish(code: CURLcode) {
        bodyBytes = []
        bodyPipe?.close()
        guard code == CURLE_OK else {
            let failure = error(for: code)
            responsePipe?.finish(failure)
            return deliver(.failure(failure))
        }
        var status = 0, connects = 0
        var sent: curl_off_t = 0
        _ = unsafe ccurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        guard responseHeadComplete else {
            // Found by scripts/chaos/net-fault: a reply cut after "HTTP/1.1 200 OK\r\n" came back
            // as a complete 200 with no body, which the upload client took as a final answer.
            let failure = CurlError(code: .partialFile, message: "the connection closed inside the response head (status \(status))")
            responsePipe?.finish(failure)
            return deliver(.failure(failure))
        }
        if let responsePipe {
            deliverHead()
            return responsePipe.finish(nil)
        }
        _ = unsafe ccurl_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects)
        _ = unsafe ccurl_easy_getinfo_off_t(easy, CURLINFO_SIZE_UPLOAD_T, &sent)
        // libcurl's last progress call may precede the final write; report the end explicitly.
        reportProgress(Int64(sent))
        let body = responseBody
        responseBody = []
        deliver(.success(CurlResponse(
            status: status, headers: responseHeaders, body: body,
            connectionsOpened: connects, bytesSent: Int64(sent)
        )))
    }

    /// Delivers a failure decided outside libcurl (cancelled, transport closed, add failed).
    func finish(failure: CurlError) {
        bodyBytes = []
        bodyPipe?.close()
        responsePipe?.finish(failure)
        deliver(.failure(failure))
    }

    /// Hands a streamed response's status and fields to the waiting caller, once.
    func deliverHead() {
        guard !deliveredHead else { return }
        deliveredHead = true
        var status = 0
        _ = unsafe ccurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        deliver(.success(CurlResponse(status: status, headers: responseHeaders, body: [])))
    }

    /// New connections this transfer opened (valid after it completed).
    var connectionsOpened: Int {
        var connects = 0
        _ = unsafe ccurl_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects)
        return connects
    }

    /// Calls `progress` when the count has grown; a rewind for a retry never makes it go back.
    func reportProgress(_ sent: Int64) {
        guard sent > reportedProgress else { return }
        reportedProgress = sent
        progress?(sent)
    }

    private func deliver(_ result: Result<CurlResponse, CurlError>) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }

    /// Turns a libcurl failure into our error, preferring what our callbacks know about why.
    private func error(for code: CURLcode) -> CurlError {
        if exceededResponseLimit || code == CURLE_FILESIZE_EXCEEDED {
            return CurlError(code: .fileSizeExceeded, message: "response body exceeds \(maxResponseBytes) bytes")
        }
        if let failure = readFailure {
            return CurlError(code: .readError, message: failure.message, systemErrno: failure.errno)
        }
        if code == CURLE_ABORTED_BY_CALLBACK && isCancelled {
            return CurlError(code: .abortedByCallback, message: "transfer cancelled")
        }
        var systemErrno = 0
        _ = unsafe ccurl_easy_getinfo_long(easy, CURLINFO_OS_ERRNO, &systemErrno)
        var message = unsafe String(cString: errorBuffer)
        if message.isEmpty { message = unsafe String(cString: curl_easy_strerror(code)) }
        return CurlError(code: .init(rawValue: Int(code.rawValue)), message: message, systemErrno: Int32(clamping: systemErrno))
    }

    /// Opens a file body and checks the region exists, so a missing file fails before connecting.
    private func openBody(_ body: CurlRequest.Body) throws(CurlError) {
        switch body {
        case .none:
            bodyLength = 0
        case .bytes(let bytes):
            bodyLength = Int64(bytes.count)
        case .stream(_, let length):
            bodyLength = length
        case .file(let path, let offset, let length):
            let fd = unsafe Glibc.open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                let code = errno
                throw CurlError(code: .readError, message: "cannot open \(path): \(Self.describe(code))", systemErrno: code)
            }
            fileDescriptor = fd
            var info = stat()
            guard unsafe fstat(fd, &info) == 0 else {
                let code = errno
                throw CurlError(code: .readError, message: "cannot stat \(path): \(Self.describe(code))", systemErrno: code)
            }
            guard Int64(info.st_size) >= offset + length else {
                throw CurlError(
                    code: .readError, message: "\(path) has \(info.st_size) bytes, region ends at \(offset + length)",
                    systemErrno: EINVAL
                )
            }
            bodyOffset = offset
            bodyLength = length
        }
    }

    /// `strerror` text for `code`.
    static func describe(_ code: Int32) -> String {
        unsafe strerror(code).map { unsafe String(cString: $0) } ?? "errno \(code)"
    }
}
