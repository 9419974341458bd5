/// A progress report, delivered off the caller's thread, in order.
///
/// ``bytesSent`` never decreases during one ``UploadClient/upload(_:control:progress:)`` call:
/// bytes of a request that is retried are not counted twice nor taken back.
public struct UploadProgress: Sendable {
    /// Bytes of the file the server has (acknowledged, or on the way in a request in flight),
    /// including bytes uploaded before a resume.
    public var bytesSent: Int64
    /// The file size.
    public var totalBytes: Int64
    /// Per v1 block or v2 part state, in file order; `nil` for a form upload.
    public var blocks: [BlockState]?

    /// The state of one block or part.
    public enum BlockState: Sendable, Equatable {
        /// Nothing of it is on the server yet.
        case pending
        /// Some of it is on the server, or a request for it is in flight.
        case uploading
        /// All of it is acknowledged.
        case done
    }

    /// Creates a report.
    public init(bytesSent: Int64, totalBytes: Int64, blocks: [BlockState]?) {
        self.bytesSent = bytesSent
        self.totalBytes = totalBytes
        self.blocks = blocks
    }
}
