import UpCore

// The MIME type a blob's first bytes show (§1.3 detectMime, mimeLimit), in one place for v1
// blocks and v2 parts: kept in the index row by the request that wrote those bytes when it saw
// the whole sniffing window, read back from the store otherwise (docs/ARCHITECTURE.md, "Bytes
// no longer in memory are read back only when they can matter").

extension BlobWritten {
    /// What the row of a blob of `length` bytes that this body starts keeps as its sniffed type
    /// (`BlockRecord.sniffedType`, `UploadPart.sniffedType`): the sniffer's answer when the body
    /// held the whole window (`MimeSniffer.windowSize` bytes, or the whole blob), else nil (not
    /// recorded: ``BlockStore/sniffedType(of:recorded:)`` reads the bytes back).
    func sniffedType(startingBlobOf length: Int64) -> String?? {
        count >= min(Int64(MimeSniffer.windowSize), length) ? .some(MimeSniffer.sniff(head)) : nil
    }
}

extension BlockStore {
    /// The MIME type the first bytes of `first` show: what its row `recorded`, else read back
    /// from this store; nil for an empty segment.
    func sniffedType(of first: Segment, recorded: String??) async throws -> String? {
        guard first.length > 0 else { return nil }
        if let recorded { return recorded }
        let window = min(Int64(MimeSniffer.windowSize), first.length)
        let bytes = try await BlockingWork.run { try self.read(first.blob, range: 0..<window) }
        return MimeSniffer.sniff(bytes)
    }
}
