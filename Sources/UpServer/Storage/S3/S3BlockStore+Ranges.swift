extension S3BlockStore: ByteRangeServing {
    /// See `ByteRangeServing.fileRange(joining:range:)`: the bytes of `range` are streamed from
    /// S3 (ranged GETs of the chunk objects it covers) into a scratch file
    /// (`BlockStore.spool(_:range:in:)`) that the HTTP server then sends.
    public func fileRange(joining segments: [Segment], range: Range<Int64>) throws -> FileRange {
        try spool(segments, range: range, in: scratchDirectory)
    }
}
