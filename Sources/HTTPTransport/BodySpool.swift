import Foundation
import NativeOS

/// How ``URLSessionTransport`` hands a body to URLSession, which uploads only a `Data` or a whole
/// file: a file region or a streamed body is first copied to a temporary file (see the type's
/// notes), 256 KiB at a time.
struct BodySpool {
    /// Where temporary files go.
    let directory: String
    static let piece = 256 << 10

    /// A body as URLSession takes it.
    enum Upload: Sendable {
        case none
        case data(Data)
        /// A file to upload whole; `temporary` ones are deleted by ``remove()``.
        case file(URL, temporary: Bool)

        /// Deletes a temporary file (when the exchange ends).
        func remove() {
            if case .file(let url, true) = self { try? FileManager.default.removeItem(at: url) }
        }
    }

    /// `body` ready to send; throws ``TransportError/Kind/io(errno:)`` for a missing or unreadable
    /// file (`errno`) or a region past its end (`EINVAL`).
    func prepare(_ body: TransportBody) throws(TransportError) -> Upload {
        switch body {
        case .none: return .none
        case .bytes(let bytes): return .data(Data(bytes))
        case .file(let path, let offset, let length):
            let file: ReadableFile
            do { file = try ReadableFile(path: path) } catch { throw TransportError(.io(errno: error.code), error.description) }
            let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
            guard offset + length <= size else {
                throw TransportError(.io(errno: EINVAL), "\(path) has \(size) bytes, the region ends at \(offset + length)")
            }
            if length == 0 { return .data(Data()) }
            if offset == 0, length == size { return .file(URL(fileURLWithPath: path), temporary: false) }
            let output = try Output(directory: directory)
            do {
                var buffer: [UInt8] = []
                var done: Int64 = 0
                while done < length {
                    let want = Int(min(Int64(Self.piece), length - done))
                    let got = try file.read(into: &buffer, count: want, at: offset + done)
                    guard got == want else { throw TransportError(.io(errno: EIO), "\(path) shrank while it was read") }
                    try output.write(buffer)
                    done += Int64(got)
                }
            } catch let error as TransportError {
                output.discard()
                throw error
            } catch {
                output.discard()
                throw TransportError(.io(errno: (error as? NativeFileError)?.code ?? EIO), "\(error)")
            }
            return try output.finish()
        }
    }

    /// Writes `body`'s pieces to a temporary file: the producer's own error when it fails,
    /// ``TransportError/Kind/invalidRequest`` when it yields more than `body.length` bytes,
    /// `io(EIO)` when fewer.
    func spool(_ body: StreamedRequestBody) async throws -> Upload {
        let output = try Output(directory: directory)
        do {
            var written: Int64 = 0
            for try await piece in body.pieces {
                written += Int64(piece.count)
                guard written <= body.length else {
                    throw TransportError(.invalidRequest, "request body longer than its declared \(body.length) bytes")
                }
                try output.write(piece)
            }
            guard written == body.length else {
                throw TransportError(.io(errno: EIO), "request body ended after \(written) of its \(body.length) bytes")
            }
        } catch {
            output.discard()
            throw error
        }
        return try output.finish()
    }

    /// A temporary file being written.
    private final class Output {
        let url: URL
        let handle: FileHandle

        init(directory: String) throws(TransportError) {
            url = URL(fileURLWithPath: directory).appendingPathComponent("upgate-body-\(UUID().uuidString)")
            guard FileManager.default.createFile(atPath: url.path, contents: nil),
                let handle = FileHandle(forWritingAtPath: url.path)
            else { throw TransportError(.io(errno: EIO), "cannot create the spool file \(url.path)") }
            self.handle = handle
        }

        func write(_ bytes: [UInt8]) throws(TransportError) {
            do { try handle.write(contentsOf: bytes) } catch {
                throw TransportError(.io(errno: EIO), "cannot write the spool file \(url.path): \(error.localizedDescription)")
            }
        }

        func finish() throws(TransportError) -> Upload {
            do { try handle.close() } catch { throw TransportError(.io(errno: EIO), "cannot close \(url.path)") }
            return .file(url, temporary: true)
        }

        func discard() {
            try? handle.close()
            try? FileManager.default.removeItem(at: url)
        }
    }
}
