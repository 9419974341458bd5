import HTTPTransport

extension S3Client {
    /// `CreateMultipartUpload`: starts an upload for `key` and returns its upload id.
    public func createMultipartUpload(_ key: String, contentType: String? = nil) async throws(S3Error) -> String {
        let headers: [(name: String, value: String)] = contentType.map { [("Content-Type", $0)] } ?? []
        let (root, _) = try await document("POST", key: key, query: [("uploads", "")], headers: headers)
        guard let uploadId = root.text(of: "UploadId"), !uploadId.isEmpty else {
            throw S3Error(.other, message: "CreateMultipartUpload answered without an UploadId")
        }
        return uploadId
    }

    /// `UploadPart`: part `number` (1…10000) of the upload; returns its ETag. Every part but the
    /// last must be at least 5 MiB, which the store checks at completion (`EntityTooSmall`).
    public func uploadPart(_ key: String, uploadId: String, number: Int, body: Body) async throws(S3Error) -> String {
        let response = try await send(
            "PUT", key: key, query: [("partNumber", String(number)), ("uploadId", uploadId)], body: body,
            timeout: settings.transferTimeout)
        try await drain(response)
        return response.head[header: "ETag"]?.unquotedETag ?? ""
    }

    /// `UploadPartCopy`: part `number` copied inside the store from `source` (a key in the same
    /// bucket), the whole object or `range` of it; returns the part's ETag. No byte passes through
    /// us, but the store may copy them (SeaweedFS does: see the notes' measurements).
    public func uploadPartCopy(
        _ key: String, uploadId: String, number: Int, source: String, range: Range<Int64>? = nil
    ) async throws(S3Error) -> String {
        var headers: [(name: String, value: String)] = [("x-amz-copy-source", "/\(settings.bucket)/" + URIEncoding.path(source))]
        if let range { headers.append(("x-amz-copy-source-range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")) }
        let (root, _) = try await document(
            "PUT", key: key, query: [("partNumber", String(number)), ("uploadId", uploadId)], headers: headers,
            timeout: settings.transferTimeout)
        return (root.text(of: "ETag") ?? "").unquotedETag
    }

    /// `CompleteMultipartUpload` with `parts` in ascending order; returns the object's ETag.
    public func completeMultipartUpload(_ key: String, uploadId: String, parts: [S3CompletedPart]) async throws(S3Error) -> String {
        let items = parts.map { "<Part><PartNumber>\($0.number)</PartNumber><ETag>\"\(S3XMLWriter.escape($0.etag))\"</ETag></Part>" }
        let xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\(items.joined())</CompleteMultipartUpload>"
        let (root, _) = try await document(
            "POST", key: key, query: [("uploadId", uploadId)], headers: [("Content-Type", "application/xml")], body: .bytes(Array(xml.utf8)),
            timeout: settings.transferTimeout)
        return (root.text(of: "ETag") ?? "").unquotedETag
    }

    /// `AbortMultipartUpload`: drops the upload and its parts.
    public func abortMultipartUpload(_ key: String, uploadId: String) async throws(S3Error) {
        try await drain(try await send("DELETE", key: key, query: [("uploadId", uploadId)]))
    }

    /// `ListMultipartUploads`: one page of unfinished uploads under `prefix` (for sweeping abandoned ones).
    public func listMultipartUploads(
        prefix: String = "", after marker: S3MultipartUploadListing.Marker? = nil, maxUploads: Int = 1000
    ) async throws(S3Error) -> S3MultipartUploadListing {
        var query: [(name: String, value: String)] = [("uploads", ""), ("prefix", prefix), ("max-uploads", String(maxUploads))]
        if let key = marker?.keyMarker { query.append(("key-marker", key)) }
        if let uploadId = marker?.uploadIdMarker { query.append(("upload-id-marker", uploadId)) }
        let (root, _) = try await document("GET", key: nil, query: query)
        let uploads = root.children("Upload").map { item in
            S3MultipartUpload(key: item.text(of: "Key") ?? "", uploadId: item.text(of: "UploadId") ?? "", initiated: item.text(of: "Initiated") ?? "")
        }
        var next: S3MultipartUploadListing.Marker?
        let keyMarker = root.text(of: "NextKeyMarker").flatMap { $0.isEmpty ? nil : $0 }
        let uploadIdMarker = root.text(of: "NextUploadIdMarker").flatMap { $0.isEmpty ? nil : $0 }
        // Truncated without any marker would list the first page forever: stop instead.
        if root.text(of: "IsTruncated") == "true", keyMarker != nil || uploadIdMarker != nil {
            next = S3MultipartUploadListing.Marker(keyMarker: keyMarker, uploadIdMarker: uploadIdMarker)
        }
        return S3MultipartUploadListing(uploads: uploads, next: next)
    }
}
