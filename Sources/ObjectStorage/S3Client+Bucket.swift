extension S3Client {
    /// `CreateBucket` for the configured bucket; one that already exists and is ours is success,
    /// so a first start (and every test) may call it unconditionally.
    public func createBucket() async throws(S3Error) {
        // us-east-1 is the default location and must not be named (S3 API reference, CreateBucket).
        let body: Body = settings.region == "us-east-1" ? .none : .bytes(Array(
            ("<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><LocationConstraint>"
                + S3XMLWriter.escape(settings.region) + "</LocationConstraint></CreateBucketConfiguration>").utf8))
        do {
            try await drain(try await send("PUT", key: nil, body: body))
        } catch where error.code == "BucketAlreadyOwnedByYou" {
            return
        }
    }

    /// `HeadBucket`: succeeds when the bucket exists and these credentials may use it;
    /// ``S3Error/Kind/notFound`` or ``S3Error/Kind/accessDenied`` otherwise.
    public func headBucket() async throws(S3Error) {
        try await drain(try await send("HEAD", key: nil))
    }
}
