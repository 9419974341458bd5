import Basics
import HTTPKit
import UpCore

/// Consumes the multipart events of a form upload (qiniu-protocol.md §6): collects the fields,
/// authorizes the token when the `file` part begins — before a single byte is stored — and
/// streams the file into 4 MiB blobs through a `BlobWriter` (the policy's `fsizeLimit` is its
/// limit: 413 as soon as the running size passes it, not after storing the whole body).
///
/// Order of parts [ambiguous, §6]: every SDK and the docs send `token` first and `file` last.
/// The token must come before the file, because the policy (fsizeLimit, the bucket) decides
/// whether bytes may be stored at all; a file part with no token before it is not stored and,
/// once the body has been read, answered with `401 token not specified` if the form never had a
/// token, else `400` with a message saying the token must precede the file. Other fields may come
/// after the file: nothing is committed before the whole body has been read, so they still count.
///
/// Not Sendable: one request's handler owns it.
final class FormUploadReader {
    /// The file part's description once it has begun.
    struct FilePart: Sendable {
        /// `filename` of the part's Content-Disposition (`nil` or `""` when absent).
        var filename: String?
        /// The part's Content-Type: the client's MIME type (§6).
        var contentType: String?
    }

    /// What a fully read form holds.
    struct Upload {
        /// The token authorized when the file began.
        var token: UpToken
        /// Every kept field.
        var fields: FormFields
        /// The file part.
        var file: FilePart
        /// Its bytes.
        var writer: BlobWriter
    }

    /// The part being read.
    private enum Part {
        /// Between parts.
        case none
        /// A kept field, its bytes so far.
        case field(name: String, bytes: [UInt8])
        /// The authorized file: data goes to the sink.
        case file
        /// Ignored: an unknown field, or a file before any token.
        case skipped
    }

    private let authorizer: UploadAuthorizer
    private let ingest: BlobIngest
    private let clock: any WallClock
    private let metrics: UpMetrics
    /// The file's bytes go here, once the file part has begun.
    private(set) var file: BlobWriter?
    private(set) var fields = FormFields()
    private var part = Part.none
    private var token: UpToken?
    private var filePart: FilePart?
    private var fileBeforeToken = false
    /// The request's `Content-Length`, when it has one: the file is no longer (`BlobTarget.expectedBytes`).
    private let declaredLength: Int64?

    /// A reader for one request whose `Content-Length` is `declaredLength` (nil when unknown).
    init(
        authorizer: UploadAuthorizer, ingest: BlobIngest, clock: any WallClock, metrics: UpMetrics,
        declaredLength: Int64?
    ) {
        self.authorizer = authorizer
        self.ingest = ingest
        self.clock = clock
        self.metrics = metrics
        self.declaredLength = declaredLength
    }

    /// Handles the events of one fed piece.
    ///
    /// - Throws: ``UpError`` (401/631 from the token, 413 past `fsizeLimit`, 400 for a second
    ///   file part or a bad field), store errors.
    func consume(_ events: [MultipartFormParser.Event]) async throws {
        for event in events {
            switch event {
            case .partStart(let name, let filename, let contentType):
                try start(name: name, filename: filename, contentType: contentType)
            case .partData(let bytes):
                switch part {
                case .field(let name, var collected):
                    part = .none  // keep `collected` uniquely referenced while appending
                    collected += bytes
                    part = .field(name: name, bytes: collected)
                case .file:
                    try await file?.write(bytes)
                case .none, .skipped:
                    break
                }
            case .partEnd:
                if case .field(let name, let bytes) = part { try fields.set(name: name, value: bytes) }
                part = .none
            }
        }
    }

    /// A part begins. The `file` part is recognized by its name (§6), with or without a filename
    /// (without one, the parser caps it like any field at `MultipartFormParser.maxFieldBytes`).
    private func start(name: String, filename: String?, contentType: String?) throws {
        guard name == "file" else {
            part = FormFields.isKept(name) ? .field(name: name, bytes: []) : .skipped
            return
        }
        guard filePart == nil, !fileBeforeToken else {
            throw UpError(.secondFilePart)
        }
        // Both may be stored (fname, the client's MIME type): the rule of every stored text.
        try ProtocolText.check(filename ?? "", field: "form: the file part's filename")
        try ProtocolText.check(contentType ?? "", field: "form: the file part's Content-Type")
        guard fields.token != nil else {
            // Not stored; judged in `finish()` once we know whether a token comes at all.
            fileBeforeToken = true
            part = .skipped
            return
        }
        // §1.2: token not specified / bad / expired → 401; unknown bucket → 631.
        let token = try authorizer.authorize(formToken: fields.token, now: clock.unixSeconds)
        self.token = token
        // §1.3 fsizeLimit; fsizeMin waits for the final size.
        file = ingest.writer(BlobTarget(
            layout: .blocks, limit: token.policy.fsizeLimit ?? .max,
            overflow: UpError(.fileTooLarge, detail: "form file > fsizeLimit \(token.policy.fsizeLimit ?? 0)"),
            // The `crc32` field may come after the file (§6): always computed.
            crc32: true, etag: true, expectedBytes: declaredLength))
        filePart = FilePart(filename: filename, contentType: contentType)
        part = .file
        metrics.uploadsStarted.increment(["form"])
    }

    /// Called after the parser's `finish()`: the form as read.
    ///
    /// - Throws: `401 token not specified` (no token anywhere); `400` when the token came after
    ///   the file; the token's own 401/631 when there is no file; then
    ///   `400 file is not specified in multipart` (§6).
    func finish() throws -> Upload {
        if fileBeforeToken {
            guard let token = fields.token, !token.isEmpty else { throw UpError(.tokenNotSpecified) }
            throw UpError(.fileBeforeToken)
        }
        guard let token, let filePart, let file else {
            // §1.2 step 1 comes first: a form without token is 401 even when the file is missing too.
            _ = try authorizer.authorize(formToken: fields.token, now: clock.unixSeconds)
            throw UpError(.fileNotSpecified)
        }
        return Upload(token: token, fields: fields, file: filePart, writer: file)
    }
}
