extension S3BlockStore: ByteRangeServing {
    /// See `ByteRangeServing.fileRange(joining:)`: the segments are streamed from S3 into a
    /// scratch file (`BlockStore.spool(_:in:)`) that the HTTP server then sends.
    public func fileRange(joining segments: [Segment]) throws -> FileRange {
        try spool(segments, in: scratchDirectory)
    }
}
