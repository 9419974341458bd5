import NativeCrypto
import UpCore

/// The v2 multipart upload (qiniu-protocol.md §5) as a pure state machine: init, parts
/// (numbered from 1, `concurrency` in flight, started in ascending order), complete with the
/// parts in ascending order. A 612 (`no such uploadId`) drops the upload id and every part and
/// starts over with a new init.
struct MultipartUpload: Sendable {
    /// What to send next.
    enum Action: Sendable, Equatable {
        /// `POST …/uploads`.
        case initiate
        /// `PUT …/uploads/<uploadID>/<number>` with the file bytes in `range`.
        case putPart(uploadID: String, number: Int, range: Range<Int64>)
        /// `POST …/uploads/<uploadID>` with these parts (ascending).
        case complete(uploadID: String, parts: [Part])
        /// Wait for a request in flight.
        case wait
        /// Done.
        case finished
        /// Part `number` (or the upload, number 0) failed too often; give up.
        case failed(number: Int, reason: String)
    }

    /// What happened to a request.
    enum Event: Sendable, Equatable {
        /// init returned this upload id, valid until `expiresAt`.
        case initiated(uploadID: String, expiresAt: Int64)
        /// Part `number` is stored with this etag; `digest` is the part digest (§7.2) of the
        /// bytes sent for it.
        case partAccepted(number: Int, etag: String, digest: [UInt8])
        /// Part `number` was not stored; `retryable` sends it again, otherwise give up.
        case partFailed(number: Int, retryable: Bool)
        /// 612: the upload id is gone; start over.
        case uploadExpired
        /// complete succeeded.
        case completed
    }

    /// One acknowledged part.
    struct Part: Sendable, Equatable, Codable {
        /// 1-based part number.
        var number: Int
        /// The server's etag for it.
        var etag: String
        /// Hex part digest (§7.2) of the bytes sent for it: the local hash is made of these.
        var digest: String?
    }

    /// The file size.
    let fileSize: Int64
    /// Bytes per part (the last may be shorter).
    let partSize: Int64
    /// Parts in flight at most.
    let concurrency: Int
    /// Failures tolerated per part, and upload restarts, before giving up.
    let maxFailures: Int
    /// The upload id, once initiated.
    private(set) var uploadID: String?
    /// When the upload id expires.
    private(set) var expiresAt: Int64 = 0
    /// Acknowledged parts by number.
    private(set) var parts: [Int: Part] = [:]
    private var inFlight: Set<Int> = []
    private var initiating = false
    private var failures: [Int: Int] = [:]
    private var restarts = 0
    private var done = false

    /// Creates the machine, optionally resuming `uploadID` with its acknowledged `parts`.
    init(
        fileSize: Int64, partSize: Int64, concurrency: Int, maxFailures: Int = 3,
        uploadID: String? = nil, expiresAt: Int64 = 0, parts restored: [Part] = []
    ) {
        self.fileSize = fileSize
        self.partSize = max(1, partSize)
        self.concurrency = max(1, concurrency)
        self.maxFailures = maxFailures
        self.uploadID = uploadID
        self.expiresAt = expiresAt
        if uploadID != nil {
            for part in restored where (1...partCount).contains(part.number) { parts[part.number] = part }
        }
    }

    /// Number of parts (an empty file is one empty part).
    var partCount: Int { max(1, Int((fileSize + partSize - 1) / partSize)) }

    /// The file range of part `number`.
    func range(ofPart number: Int) -> Range<Int64> {
        let start = Int64(number - 1) * partSize
        return start..<min(fileSize, start + partSize)
    }

    /// Bytes of acknowledged parts.
    var acknowledgedBytes: Int64 { parts.keys.reduce(0) { $0 + Int64(range(ofPart: $1).count) } }

    /// Acknowledged parts in ascending order.
    var sortedParts: [Part] { parts.sorted { $0.key < $1.key }.map(\.value) }

    /// The object hash of the bytes sent (§7.2: the v1 etag for 4 MiB parts), once every part
    /// is acknowledged; nil before.
    var etag: String? {
        var pieces: [Etag.Part] = []
        for number in 1...partCount {
            guard let hex = parts[number]?.digest, let digest = Hex.decode(hex) else { return nil }
            pieces.append(Etag.Part(digest: digest, size: Int64(range(ofPart: number).count)))
        }
        return Etag.v2(parts: pieces)
    }

    /// Whether part `number` is in flight.
    func isInFlight(_ number: Int) -> Bool { inFlight.contains(number) }

    /// The next request to send.
    mutating func nextAction() -> Action {
        if done { return .finished }
        if restarts > maxFailures { return .failed(number: 0, reason: "upload id expired \(restarts) times") }
        if let (number, count) = failures.first(where: { $0.value > maxFailures }) {
            return .failed(number: number, reason: "part \(number) failed \(count) times")
        }
        guard let uploadID else {
            if initiating { return .wait }
            initiating = true
            return .initiate
        }
        if parts.count == partCount, inFlight.isEmpty { return .complete(uploadID: uploadID, parts: sortedParts) }
        guard inFlight.count < concurrency,
            let number = (1...partCount).first(where: { parts[$0] == nil && !inFlight.contains($0) })
        else { return .wait }
        inFlight.insert(number)
        return .putPart(uploadID: uploadID, number: number, range: range(ofPart: number))
    }

    /// Applies the outcome of a request.
    mutating func handle(_ event: Event) {
        switch event {
        case .initiated(let id, let expiry):
            uploadID = id
            expiresAt = expiry
            initiating = false
        case .partAccepted(let number, let etag, let digest):
            inFlight.remove(number)
            parts[number] = Part(number: number, etag: etag, digest: Hex.encode(digest))
        case .partFailed(let number, let retryable):
            inFlight.remove(number)
            failures[number, default: 0] += retryable ? 1 : maxFailures + 1
        case .uploadExpired:
            uploadID = nil
            expiresAt = 0
            parts = [:]
            inFlight = []
            initiating = false
            restarts += 1
        case .completed:
            done = true
        }
    }
}
