/// A streaming `multipart/form-data` parser (RFC 7578 on RFC 2046 §5.1) for the form upload
/// (qiniu-protocol.md §6), as a pure state machine: bytes in, events out, no I/O.
///
/// Memory is bounded whatever the body size: a part's data is handed out as it arrives, holding
/// back at most `delimiter.count - 1` bytes (a delimiter may be split across ``feed(_:)``
/// calls), so no ``Event/partData(_:)`` is longer than the fed piece plus the delimiter
/// (`CRLF -- boundary`). Only one part's header block (≤ ``maxHeaderBytes``) is ever buffered.
///
/// ```swift
/// var parser = try MultipartFormParser(boundary: boundary)
/// for piece in body { for event in try parser.feed(piece) { … } }
/// try parser.finish()
/// ```
///
/// Framing, exactly per RFC 2046: the first delimiter may open the body without a leading CRLF;
/// anything before it (preamble) is skipped; after each boundary, optional spaces/tabs then CRLF
/// (or `--` for the close delimiter); the CRLF before a delimiter belongs to the delimiter, not
/// to the data; after the close delimiter, optional spaces/tabs then CRLF, and everything after
/// that (epilogue) is ignored. Every violation and every limit is a ``UpError`` `.badRequest`
/// (400) with a distinct `detail`; after an error the parser stays failed.
///
/// Limits: header block per part ≤ ``maxHeaderBytes``; data of a part without `filename`
/// ≤ ``maxFieldBytes`` (the caller collects those fields; file data is unlimited here — the
/// policy's `fsizeLimit` is the caller's); at most ``maxParts`` parts.
public struct MultipartFormParser: Sendable {
    /// What the parser found, in body order.
    public enum Event: Sendable, Equatable {
        /// A part begins. `filename` is set (possibly `""`) when the Content-Disposition has one
        /// — the `file` part of a form upload; `contentType` is the part's `Content-Type`.
        case partStart(name: String, filename: String?, contentType: String?)
        /// The next piece of the current part's data (never empty).
        case partData([UInt8])
        /// The current part is complete.
        case partEnd
    }

    /// Largest header block of one part, in bytes.
    public static let maxHeaderBytes = 16 * 1024
    /// Largest value of a non-file field, in bytes.
    public static let maxFieldBytes = 64 * 1024
    /// Most parts in one body.
    public static let maxParts = 1000

    private enum State: Sendable {
        case preamble
        /// Just after `--boundary`; `padding` once spaces/tabs were seen (then `--` is too late).
        case afterDelimiter(padding: Bool)
        /// The buffer starts with the CRLF that ended the boundary line.
        case headers
        case body
        case afterClose
        case epilogue
        case failed(UpError)
    }

    /// `CRLF -- boundary`.
    private let delimiter: [UInt8]
    /// Unconsumed input. Starts as CRLF so the first delimiter needs no special case.
    private var buffer: [UInt8] = [0x0D, 0x0A]
    private var state = State.preamble
    private var partCount = 0
    private var currentName = ""
    private var currentIsFile = false
    private var currentFieldBytes = 0

    /// Creates a parser for one body.
    ///
    /// - Parameter boundary: The `boundary` parameter of the Content-Type (see
    ///   ``boundary(fromContentType:)``): 1…70 characters, printable ASCII or space, not ending
    ///   in a space (RFC 2046 §5.1.1).
    /// - Throws: ``UpError`` `.badRequest` for an invalid boundary.
    public init(boundary: String) throws(UpError) {
        let bytes = Array(boundary.utf8)
        guard (1...70).contains(bytes.count), bytes.allSatisfy({ (0x20...0x7E).contains($0) && $0 != 0x22 }),
            bytes.last != 0x20
        else {
            throw UpError(.badRequest, detail: "multipart: invalid boundary")
        }
        delimiter = [0x0D, 0x0A, 0x2D, 0x2D] + bytes
    }

    /// The boundary of a `multipart/form-data` Content-Type header, quoted or not
    /// (`multipart/form-data; boundary=687e…` or `boundary="a b"`); type and parameter names
    /// are case-insensitive.
    ///
    /// - Parameter contentType: The header value.
    /// - Returns: The boundary, or `nil` when the type is not `multipart/form-data` or it has none.
    public static func boundary(fromContentType contentType: String) -> String? {
        guard let (type, parameters) = HeaderParameters.parse(Array(contentType.utf8)),
            type == "multipart/form-data", let boundary = parameters["boundary"], !boundary.isEmpty
        else { return nil }
        return boundary
    }

    /// Feeds the next piece of the body.
    ///
    /// - Parameter bytes: Any number of bytes (including none).
    /// - Returns: The events completed by these bytes, in order.
    /// - Throws: ``UpError`` `.badRequest` for malformed framing or a limit; the parser then
    ///   refuses everything.
    public mutating func feed(_ bytes: [UInt8]) throws(UpError) -> [Event] {
        if case .failed(let error) = state { throw error }
        buffer += bytes
        var events: [Event] = []
        do {
            let consumed = try process(into: &events)
            buffer.removeFirst(consumed)
        } catch {
            state = .failed(error)
            throw error
        }
        return events
    }

    /// Declares the end of the body.
    ///
    /// Ending right after the close delimiter (no CRLF) is accepted.
    ///
    /// - Throws: ``UpError`` `.badRequest` when the close delimiter never came (detail says
    ///   whether any boundary was seen at all).
    public mutating func finish() throws(UpError) {
        let error: UpError
        switch state {
        case .epilogue, .afterClose: return
        case .failed(let failure): throw failure
        case .preamble: error = UpError(.badRequest, detail: "multipart: no boundary found in body")
        default: error = UpError(.badRequest, detail: "multipart: body ended before the close delimiter")
        }
        state = .failed(error)
        throw error
    }

    /// Runs the state machine over `buffer`; returns how many leading bytes it consumed.
    private mutating func process(into events: inout [Event]) throws(UpError) -> Int {
        var position = 0
        while true {
            switch state {
            case .failed(let error):
                throw error
            case .epilogue:
                return buffer.count
            case .preamble:
                let (found, index) = searchDelimiter(from: position)
                position = index
                guard found else { return position }
                position += delimiter.count
                state = .afterDelimiter(padding: false)
            case .afterDelimiter(let padding):
                guard position < buffer.count else { return position }
                switch buffer[position] {
                case 0x2D where !padding:  // "-": the close delimiter "--"?
                    guard position + 1 < buffer.count else { return position }
                    guard buffer[position + 1] == 0x2D else { throw Self.failure("garbage after boundary") }
                    position += 2
                    state = .afterClose
                case 0x20, 0x09:
                    position += 1
                    state = .afterDelimiter(padding: true)
                case 0x0D:
                    guard position + 1 < buffer.count else { return position }
                    guard buffer[position + 1] == 0x0A else { throw Self.failure("missing CRLF after boundary") }
                    guard partCount < Self.maxParts else { throw Self.failure("more than \(Self.maxParts) parts") }
                    state = .headers  // keep the CRLF: the header block search starts on it
                case 0x0A:
                    throw Self.failure("missing CRLF after boundary (bare LF)")
                default:
                    throw Self.failure("garbage after boundary")
                }
            case .headers:
                guard let end = searchHeaderEnd(from: position) else {
                    if buffer.count - position > Self.maxHeaderBytes + 4 {
                        throw Self.failure("part header block longer than \(Self.maxHeaderBytes) bytes")
                    }
                    return position
                }
                // The block lies between the boundary line's CRLF and the empty line's CRLF CRLF.
                let block = end > position ? Array(buffer[(position + 2)..<end]) : []
                guard block.count <= Self.maxHeaderBytes else {
                    throw Self.failure("part header block longer than \(Self.maxHeaderBytes) bytes")
                }
                let headers = try PartHeaders.parse(block)
                partCount += 1
                currentName = headers.name
                currentIsFile = headers.filename != nil
                currentFieldBytes = 0
                events.append(
                    .partStart(name: headers.name, filename: headers.filename, contentType: headers.contentType))
                position = end + 4
                state = .body
            case .body:
                let (found, index) = searchDelimiter(from: position)
                if index > position {
                    currentFieldBytes += index - position
                    if !currentIsFile && currentFieldBytes > Self.maxFieldBytes {
                        throw Self.failure(
                            "form field \(currentName.prefix(64)) longer than \(Self.maxFieldBytes) bytes")
                    }
                    events.append(.partData(Array(buffer[position..<index])))
                }
                position = index
                guard found else { return position }
                events.append(.partEnd)
                position += delimiter.count
                state = .afterDelimiter(padding: false)
            case .afterClose:
                guard position < buffer.count else { return position }
                switch buffer[position] {
                case 0x20, 0x09:
                    position += 1
                case 0x0D:
                    guard position + 1 < buffer.count else { return position }
                    guard buffer[position + 1] == 0x0A else { throw Self.failure("garbage after close delimiter") }
                    position += 2
                    state = .epilogue
                default:
                    throw Self.failure("garbage after close delimiter")
                }
            }
        }
    }

    /// Finds the first full delimiter at or after `start`: `(true, index)`. Otherwise
    /// `(false, index)` where `index` is the earliest position from which the rest of the buffer
    /// could still become a delimiter (the buffer's end when none) — bytes before it are safe
    /// to hand out.
    private func searchDelimiter(from start: Int) -> (found: Bool, index: Int) {
        var index = start
        let count = buffer.count
        while let candidate = buffer[index..<count].firstIndex(of: 0x0D) {
            let available = min(delimiter.count, count - candidate)
            if buffer[candidate..<(candidate + available)].elementsEqual(delimiter[0..<available]) {
                return (available == delimiter.count, candidate)
            }
            index = candidate + 1
        }
        return (false, count)
    }

    /// Index of the first CRLF CRLF at or after `start`, or `nil`.
    private func searchHeaderEnd(from start: Int) -> Int? {
        var index = start
        while index + 3 < buffer.count {
            if buffer[index] == 0x0D && buffer[index + 1] == 0x0A && buffer[index + 2] == 0x0D
                && buffer[index + 3] == 0x0A
            {
                return index
            }
            index += 1
        }
        return nil
    }

    static func failure(_ detail: String) -> UpError { UpError(.badRequest, detail: "multipart: " + detail) }
}
